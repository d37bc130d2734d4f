package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// DueEntry is a delivery's place in the schedule: the sender's poll reads only these, so that its
// cost follows the pending work rather than every delivery kept for the delivery log. The
// delivery stays the truth; an entry only says when to look at it again. Every pending delivery
// has an entry no later than its next attempt; an entry may outlive its delivery's pending state
// (the poll deletes it then).
type DueEntry struct {
	ID    string    `bson:"_id"` // the delivery id
	DueAt time.Time `bson:"due_at"`
}

// InsertDue adds entries to the schedule in one command; an entry already there is kept as it is.
func (s *Store) InsertDue(ctx context.Context, entries ...DueEntry) error {
	if len(entries) == 0 {
		return nil
	}
	docs := make([]any, len(entries))
	for i := range entries {
		docs[i] = entries[i]
	}
	_, err := s.c(Due).InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	if err != nil && !mongox.OnlyDuplicateKeys(err) {
		return fmt.Errorf("schedule deliveries: %w", err)
	}
	return nil
}

// DueEntries returns up to limit entries due at now, the longest due first.
func (s *Store) DueEntries(ctx context.Context, now time.Time, limit int) ([]DueEntry, error) {
	return mongox.FindAll[DueEntry](ctx, s.c(Due),
		bson.D{{Key: "due_at", Value: bson.D{{Key: "$lte", Value: now}}}},
		options.Find().SetSort(bson.D{{Key: "due_at", Value: 1}}).SetLimit(int64(limit)))
}

// MoveDue sets when a delivery is next looked at, adding its entry when it has none.
func (s *Store) MoveDue(ctx context.Context, id string, at time.Time) error {
	return s.replace(ctx, Due, id, DueEntry{ID: id, DueAt: at})
}

// DeleteDue removes the entries of deliveries that are final or gone, in one command.
func (s *Store) DeleteDue(ctx context.Context, ids ...string) error {
	var filter bson.D
	switch len(ids) {
	case 0:
		return nil
	case 1:
		filter = mongox.ByID(ids[0]) // pushed down to SQL by FerretDB
	default:
		filter = bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}
	}
	if _, err := s.c(Due).DeleteMany(ctx, filter); err != nil {
		return fmt.Errorf("unschedule deliveries: %w", err)
	}
	return nil
}

// scheduledMigration names the marker of ScheduleStoredDeliveries in the migrations collection.
const scheduledMigration = "due_entries"

// migration is the marker of a one-off data change that is done.
type migration struct {
	ID     string    `bson:"_id"`
	DoneAt time.Time `bson:"done_at"`
}

// ScheduleStoredDeliveries gives an entry to every pending delivery stored before the schedule
// existed, once per database: a marker remembers that it ran. It scans the deliveries, and returns
// how many entries it added (0 when the marker was there). Replicas starting together may both
// scan; their entries are inserted once.
func (s *Store) ScheduleStoredDeliveries(ctx context.Context, now time.Time) (int, error) {
	err := mongox.FindOne(ctx, s.c(Migrations), mongox.ByID(scheduledMigration), &migration{})
	switch {
	case err == nil:
		return 0, nil
	case !errors.Is(err, mongox.ErrNotFound):
		return 0, fmt.Errorf("read migration marker: %w", err)
	}
	type next struct {
		ID            string    `bson:"_id"`
		NextAttemptAt time.Time `bson:"next_attempt_at"`
	}
	found, err := mongox.FindAll[next](ctx, s.c(Deliveries), bson.D{{Key: "status", Value: StatusPending}},
		options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}, {Key: "next_attempt_at", Value: 1}}))
	if err != nil {
		return 0, fmt.Errorf("list pending deliveries: %w", err)
	}
	pending := make([]DueEntry, len(found))
	for i, d := range found {
		pending[i] = DueEntry{ID: d.ID, DueAt: d.NextAttemptAt}
		if d.NextAttemptAt.IsZero() { // a pending delivery always has a next attempt; be safe anyway
			pending[i].DueAt = now
		}
	}
	for start := 0; start < len(pending); start += 1000 {
		if err := s.InsertDue(ctx, pending[start:min(start+1000, len(pending))]...); err != nil {
			return 0, err
		}
	}
	_, err = s.c(Migrations).InsertOne(ctx, migration{ID: scheduledMigration, DoneAt: now})
	if err != nil && !mongox.IsDuplicateKey(err) {
		return 0, fmt.Errorf("write migration marker: %w", err)
	}
	return len(pending), nil
}
