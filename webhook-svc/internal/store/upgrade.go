package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/mongox"
)

// The layout of earlier releases, read only to carry it over.
const (
	// OldDue held one schedule entry per pending delivery: _id the delivery id, due_at.
	OldDue = "due"
	// OldLogs held the delivery logs as mongox.Log lists: entry n of list L is the document
	// "L#<n>" with the attempt in v, L being "attempts:<subscription>" or
	// "attempts:<subscription>:<outcome>"; "L#head" and "L@<key>" are the list's bookkeeping.
	OldLogs = "logs"
	// OldClaims held the claims of attempts by "<delivery>/<attempt>/<slot>", with expires_at.
	OldClaims = "claims"
)

// Markers of CarryOver in the migrations collection.
const (
	rangesMigration  = "schedule_ranges"
	droppedMigration = "schedule_ranges_dropped"
)

// catchUpMargin widens each catch-up back from the first run, past deliveries an older replica
// was inserting while it ran.
const catchUpMargin = 10 * time.Minute

// CarryOver carries a store of an earlier release over to the schedule and log ranges: every
// stored delivery gets its kept entry and, while pending, its due entry (earlier releases kept a
// due entry by delivery id, or none at all), and every line of the delivery logs is inserted under
// its key. The first call on a database reads everything and leaves a marker; until window has
// passed since, later calls carry only what was written since the first run (a rolling upgrade
// runs older replicas beside new ones, which still write the earlier layout); the first call after
// it drops the earlier collections, and later ones do nothing. On a database no release of the
// earlier layout ever ran on, the first call only marks both steps done. It returns how many deliveries
// and log lines it carried. Every insert is keyed, so replicas running it at once, or a run
// cut short and run again, insert nothing twice.
func (s *Store) CarryOver(ctx context.Context, now time.Time, window time.Duration) (int, error) {
	var m migration
	err := mongox.FindOne(ctx, s.c(Migrations), mongox.ByID(rangesMigration), &m)
	first := errors.Is(err, mongox.ErrNotFound)
	var since time.Time
	switch {
	case first:
	case err != nil:
		return 0, fmt.Errorf("read migration marker: %w", err)
	case now.Sub(m.DoneAt) >= window:
		return 0, s.dropEarlier(ctx, now)
	default:
		// A fresh database's first run marks the earlier layout dropped at once: nothing to look for.
		if done, err := s.MigrationDone(ctx, droppedMigration); err != nil || done {
			return 0, err
		}
		since = m.DoneAt.Add(-catchUpMargin)
	}
	if first {
		fresh, err := s.freshDatabase(ctx)
		if err != nil {
			return 0, err
		}
		if fresh {
			// No release of the earlier layout ever ran here, so none runs beside this one:
			// there is nothing to carry now or to look for later.
			if err := s.MarkMigration(ctx, rangesMigration, now); err != nil {
				return 0, err
			}
			return 0, s.MarkMigration(ctx, droppedMigration, now)
		}
	}
	n, err := s.carryDeliveries(ctx, since, now)
	if err != nil {
		return n, err
	}
	k, err := s.carryLogs(ctx, since)
	if err != nil {
		return n + k, err
	}
	if first {
		// Replicas starting together both carry; the first marker is kept.
		return n + k, s.MarkMigration(ctx, rangesMigration, now)
	}
	return n + k, nil
}

// freshDatabase reports whether no release of the earlier layout ever ran on the database: it
// holds no delivery and none of the earlier collections, which every such release created at its
// start.
func (s *Store) freshDatabase(ctx context.Context) (bool, error) {
	names, err := s.db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: bson.D{{Key: "$in", Value: bson.A{OldDue, OldLogs}}}}})
	if err != nil {
		return false, fmt.Errorf("list the earlier collections: %w", err)
	}
	if len(names) > 0 {
		return false, nil
	}
	err = mongox.FindOne(ctx, s.c(Deliveries), bson.D{}, &bson.Raw{})
	switch {
	case errors.Is(err, mongox.ErrNotFound):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("look for a stored delivery: %w", err)
	}
	return false, nil
}

// dropEarlier drops the collections of the earlier layout, once the rolling upgrade is over (the
// claims of the older replicas have lapsed by then).
func (s *Store) dropEarlier(ctx context.Context, now time.Time) error {
	done, err := s.MigrationDone(ctx, droppedMigration)
	if err != nil || done {
		return err
	}
	for _, name := range []string{OldDue, OldLogs, OldClaims} {
		if err := s.c(name).Drop(ctx); err != nil {
			return fmt.Errorf("drop %s: %w", name, err)
		}
	}
	return s.MarkMigration(ctx, droppedMigration, now)
}

// carryBatch is how many documents one insert of the carry-over writes.
const carryBatch = 1000

// carry reads the documents of from that filter selects and inserts into to the documents each
// becomes (conv; none for a document it skips), in inserts of carryBatch, an existing one left
// as it is. It returns how many documents it carried.
func carry[T, D any](ctx context.Context, from, to *mongo.Collection, filter bson.D, conv func(T) []D) (int, error) {
	var docs []D
	n := 0
	flush := func() error {
		_, err := mongox.InsertNew(ctx, to, docs)
		docs = docs[:0]
		return err
	}
	err := mongox.Each(ctx, from, filter, nil, func(doc T) error {
		out := conv(doc)
		if len(out) > 0 {
			n++
		}
		if docs = append(docs, out...); len(docs) >= carryBatch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return n, fmt.Errorf("carry %s over: %w", from.Name(), err)
	}
	return n, nil
}

// carryDeliveries inserts the schedule entries of the deliveries created since (zero: all).
func (s *Store) carryDeliveries(ctx context.Context, since, now time.Time) (int, error) {
	filter := bson.D{}
	if !since.IsZero() {
		filter = bson.D{{Key: "created_at", Value: bson.D{{Key: "$gte", Value: since}}}}
	}
	return carry(ctx, s.c(Deliveries), s.c(Schedule), filter, func(d Delivery) []any {
		if d.Status != StatusPending {
			return []any{keptEntry(&d)}
		}
		due := now // a pending delivery always has a next attempt; be safe anyway
		if d.NextAttemptAt != nil {
			due = *d.NextAttemptAt
		}
		return []any{keptEntry(&d), Due(d.ID, due)}
	})
}

// oldLine is a line of an earlier release's delivery log.
type oldLine struct {
	ID    string       `bson:"_id"`
	Value AttemptEntry `bson:"v"`
}

// carryLogs inserts the lines of the earlier delivery logs appended since (zero: all) under their
// keys.
func (s *Store) carryLogs(ctx context.Context, since time.Time) (int, error) {
	filter := bson.D{{Key: "v", Value: bson.D{{Key: "$exists", Value: true}}}}
	if !since.IsZero() {
		filter = append(filter, bson.E{Key: "at", Value: bson.D{{Key: "$gte", Value: since}}})
	}
	return carry(ctx, s.c(OldLogs), s.c(Attempts), filter, func(l oldLine) []LoggedAttempt {
		list, _, ok := strings.Cut(l.ID, "#")
		if !ok || !strings.HasPrefix(list, "attempts:") {
			return nil
		}
		sub, outcome, _ := strings.Cut(strings.TrimPrefix(list, "attempts:"), ":")
		return []LoggedAttempt{{Key: attemptKey(AttemptScope(sub, outcome), l.Value), AttemptEntry: l.Value}}
	})
}

// migration is the marker of a one-off data change, with when it first ran.
type migration struct {
	ID     string    `bson:"_id"`
	DoneAt time.Time `bson:"done_at"`
}

// MigrationDone reports whether the one-off migration name has run on this database.
func (s *Store) MigrationDone(ctx context.Context, name string) (bool, error) {
	err := mongox.FindOne(ctx, s.c(Migrations), mongox.ByID(name), &migration{})
	switch {
	case errors.Is(err, mongox.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read migration marker: %w", err)
	}
	return true, nil
}

// MarkMigration records that the one-off migration name has run (the first marker is kept).
func (s *Store) MarkMigration(ctx context.Context, name string, at time.Time) error {
	if err := mongox.InsertOnce(ctx, s.c(Migrations), migration{ID: name, DoneAt: at}); err != nil {
		return fmt.Errorf("write migration marker: %w", err)
	}
	return nil
}
