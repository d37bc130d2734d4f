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
	if _, err := mongox.InsertNew(ctx, s.c(Due), entries); err != nil {
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

// catchUpMargin widens each catch-up scan back from the first scan, past deliveries an older
// replica was inserting while it ran.
const catchUpMargin = 10 * time.Minute

// ScheduleStoredDeliveries gives an entry to the pending deliveries stored by a release without
// the schedule. The first call on a database scans every pending delivery and leaves a marker;
// until window has passed since, later calls scan only the pending deliveries created since the
// first scan (a rolling upgrade runs older replicas beside new ones, and those store deliveries
// without entries); after it they scan nothing. It returns how many deliveries it scheduled and
// whether calling again may still find some. Replicas calling at once insert each entry once.
func (s *Store) ScheduleStoredDeliveries(ctx context.Context, now time.Time, window time.Duration) (n int, more bool, err error) {
	var m migration
	filter := bson.D{{Key: "status", Value: StatusPending}}
	err = mongox.FindOne(ctx, s.c(Migrations), mongox.ByID(scheduledMigration), &m)
	first := errors.Is(err, mongox.ErrNotFound)
	switch {
	case first:
	case err != nil:
		return 0, false, fmt.Errorf("read migration marker: %w", err)
	case now.Sub(m.DoneAt) >= window:
		return 0, false, nil
	default:
		filter = append(filter, bson.E{Key: "created_at", Value: bson.D{{Key: "$gte", Value: m.DoneAt.Add(-catchUpMargin)}}})
	}
	n, err = s.schedulePending(ctx, filter, now)
	if err != nil {
		return 0, false, err
	}
	if first {
		// Replicas starting together both scan; the first marker is kept.
		if err := mongox.InsertOnce(ctx, s.c(Migrations), migration{ID: scheduledMigration, DoneAt: now}); err != nil {
			return 0, false, fmt.Errorf("write migration marker: %w", err)
		}
	}
	return n, true, nil
}

// schedulePending inserts an entry at its next attempt for every pending delivery matching filter.
func (s *Store) schedulePending(ctx context.Context, filter bson.D, now time.Time) (int, error) {
	type next struct {
		ID            string    `bson:"_id"`
		NextAttemptAt time.Time `bson:"next_attempt_at"`
	}
	found, err := mongox.FindAll[next](ctx, s.c(Deliveries), filter,
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
	return len(pending), nil
}
