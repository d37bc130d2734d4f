package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// Check outcomes.
const (
	Match       = "match"
	Mismatch    = "mismatch"
	Unreachable = "unreachable"
)

// Check is one look at a claim's proof.
type Check struct {
	ID       string    `bson:"_id"`
	ClaimID  string    `bson:"claim_id"`
	At       time.Time `bson:"at"`
	Outcome  string    `bson:"outcome"`
	Reason   string    `bson:"reason,omitempty"`
	Evidence string    `bson:"evidence,omitempty"`
	// Scheduled says that the periodic re-check made it, not the owner.
	Scheduled bool `bson:"scheduled,omitempty"`
}

// InsertCheck records a check at the end of its claim's list of checks.
func (s *Store) InsertCheck(ctx context.Context, c *Check) error {
	if _, err := mongox.Append(ctx, s.log, checksList(c.ClaimID), *c); err != nil {
		return fmt.Errorf("record check: %w", err)
	}
	return nil
}

// RecentChecks returns a claim's checks made at or after since, newest first, among its newest
// limit: a page of its list, whatever it holds.
func (s *Store) RecentChecks(ctx context.Context, claimID string, since time.Time, limit int64) ([]Check, error) {
	entries, _, err := mongox.Page[Check](ctx, s.log, checksList(claimID), 0, int(limit))
	if err != nil {
		return nil, fmt.Errorf("read checks: %w", err)
	}
	out := []Check{}
	for _, e := range entries {
		if !e.Value.At.Before(since) {
			out = append(out, e.Value)
		}
	}
	// Appends are in the order of the checks but for a migration racing a new check: order by time.
	slices.SortStableFunc(out, func(a, b Check) int { return b.At.Compare(a.At) })
	return out, nil
}

// LastCheck returns a claim's latest check; ok is false when it has none. It costs a few point
// reads, whatever the claim's history.
func (s *Store) LastCheck(ctx context.Context, claimID string) (c Check, ok bool, err error) {
	entries, _, err := mongox.Page[Check](ctx, s.log, checksList(claimID), 0, 1)
	if err != nil || len(entries) == 0 {
		return Check{}, false, err
	}
	return entries[0].Value, true, nil
}
