package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
)

// admissionBackfill names the marker of BackfillAdmissions in the migrations collection.
const admissionBackfill = "admission_events"

// migration is the marker of a one-off data change, with when it ran.
type migration struct {
	ID     string    `bson:"_id"`
	DoneAt time.Time `bson:"done_at"`
}

// backfillBatch is how many events BackfillAdmissions hands to publish at once.
const backfillBatch = 500

// BackfillAdmissions tells mailbox-svc's admission projection the current rules of the objects
// whose context changed before context.updated carried them: once per database, it reads every
// object's current version and hands publish a context.admission event for each one whose rules
// say something of admission, in batches; then it leaves a marker, and later calls do nothing.
// The events' ids derive from the object and version, so a run cut short and run again (or two
// replicas starting together) publishes copies that consumers drop. It costs one pass over the
// objects' first versions and a profile read per object, once.
func (s *Store) BackfillAdmissions(ctx context.Context, publish func(context.Context, []events.Pending) error) (int, error) {
	if done, err := s.migrated(ctx, admissionBackfill); err != nil || done {
		return 0, err
	}
	cur, err := s.versions.Find(ctx, bson.D{{Key: "version", Value: 1}},
		options.Find().SetProjection(bson.D{{Key: "object_id", Value: 1}}))
	if err != nil {
		return 0, fmt.Errorf("list objects: %w", err)
	}
	defer cur.Close(ctx)
	n := 0
	var batch []events.Pending
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := publish(ctx, batch); err != nil {
			return fmt.Errorf("publish admissions: %w", err)
		}
		n += len(batch)
		batch = batch[:0]
		return nil
	}
	for cur.Next(ctx) {
		var first struct {
			ObjectID string `bson:"object_id"`
		}
		if err := cur.Decode(&first); err != nil {
			return n, fmt.Errorf("decode object: %w", err)
		}
		p, err := s.Profile(ctx, first.ObjectID)
		if err != nil {
			return n, err
		}
		a := p.Rules.Admission()
		if a == (contract.Admission{}) {
			continue // the defaults: the projection needs no record
		}
		key := fmt.Sprintf("admission:%s:%d", p.ObjectID, p.Version)
		batch = append(batch, events.MustNewOnce(key, events.TopicContext, events.ContextAdmission, p.ObjectID, "", "",
			contract.ContextUpdatedData{Version: p.Version, Admission: &a}))
		if len(batch) == backfillBatch {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := cur.Err(); err != nil {
		return n, fmt.Errorf("list objects: %w", err)
	}
	if err := flush(); err != nil {
		return n, err
	}
	return n, s.markMigrated(ctx, admissionBackfill)
}

// migrated reports whether the one-off data change name has run on this database.
func (s *Store) migrated(ctx context.Context, name string) (bool, error) {
	err := mongox.FindOne(ctx, s.migrations, mongox.ByID(name), &migration{})
	if err != nil && !errors.Is(err, mongox.ErrNotFound) {
		return false, fmt.Errorf("read migration marker: %w", err)
	}
	return err == nil, nil
}

// markMigrated leaves the marker of the one-off data change name (the first one is kept).
func (s *Store) markMigrated(ctx context.Context, name string) error {
	if err := mongox.InsertOnce(ctx, s.migrations, migration{ID: name, DoneAt: time.Now()}); err != nil {
		return fmt.Errorf("write migration marker: %w", err)
	}
	return nil
}
