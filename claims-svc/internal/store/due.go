package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/mongox"
)

// dueEntry puts a claim on the re-check schedule of a period.
type dueEntry struct {
	Key     string `bson:"_id"`
	ClaimID string `bson:"claim_id"`
}

// ScheduleRecheck puts a claim on the list of the claims due for a re-check in period, once.
func (s *Store) ScheduleRecheck(ctx context.Context, period time.Time, claimID string) error {
	if err := mongox.InsertOnce(ctx, s.c(Due), dueEntry{Key: mongox.Key(mongox.Time(period), claimID), ClaimID: claimID}); err != nil {
		return fmt.Errorf("schedule re-check: %w", err)
	}
	return nil
}

// DueRechecks reads up to limit ids of the claims due for a re-check in period, after the claim
// after ("": from the first), and the id to continue after ("" when none is left): one find.
func (s *Store) DueRechecks(ctx context.Context, period time.Time, after string, limit int) ([]string, string, error) {
	r := mongox.Range{Scope: mongox.Scope(mongox.Time(period)), Limit: limit}
	if after != "" {
		r.After = mongox.Key(mongox.Time(period), after)
	}
	entries, err := mongox.Find[dueEntry](ctx, s.c(Due), r)
	if err != nil {
		return nil, "", fmt.Errorf("read due re-checks: %w", err)
	}
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.ClaimID
	}
	next := ""
	if len(ids) == limit && limit > 0 {
		next = ids[len(ids)-1]
	}
	return ids, next, nil
}

// migration is the marker of a one-off data change, or of the re-check loop's progress.
type migration struct {
	ID     string    `bson:"_id"`
	DoneAt time.Time `bson:"done_at"`
}

// rechecked names the record of the last period whose due list the re-check loop walked through.
const rechecked = "recheck_walked"

// RecheckedThrough is the last period whose due re-checks were all taken (zero: none yet).
func (s *Store) RecheckedThrough(ctx context.Context) (time.Time, error) {
	var m migration
	err := mongox.FindOne(ctx, s.c(Migrations), mongox.ByID(rechecked), &m)
	if errors.Is(err, mongox.ErrNotFound) {
		return time.Time{}, nil
	}
	return m.DoneAt, err
}

// MarkRechecked records that every re-check due through period is taken. The record only moves
// forward; replicas writing at once write the same period.
func (s *Store) MarkRechecked(ctx context.Context, period time.Time) error {
	err := mongox.Upsert(ctx, s.c(Migrations), rechecked, bson.D{{Key: "$max", Value: bson.D{{Key: "done_at", Value: period}}}})
	if err != nil {
		return fmt.Errorf("record re-check progress: %w", err)
	}
	return nil
}
