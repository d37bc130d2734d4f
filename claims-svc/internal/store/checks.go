package store

import (
	"context"
	"fmt"
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
	// Key is <claim>|<time>|<check id>: a claim's checks are one range in the order of time.
	Key      string    `bson:"_id"`
	ID       string    `bson:"check_id"`
	ClaimID  string    `bson:"claim_id"`
	At       time.Time `bson:"at"`
	Outcome  string    `bson:"outcome"`
	Reason   string    `bson:"reason,omitempty"`
	Evidence string    `bson:"evidence,omitempty"`
	// Scheduled says that the periodic re-check made it, not the owner.
	Scheduled bool `bson:"scheduled,omitempty"`
}

func checkKey(c *Check) string { return mongox.Key(c.ClaimID, mongox.Time(c.At), c.ID) }

// InsertCheck records a check in its claim's range; recording it again is a no-op.
func (s *Store) InsertCheck(ctx context.Context, c *Check) error {
	c.Key = checkKey(c)
	if err := mongox.InsertOnce(ctx, s.c(Checks), c); err != nil {
		return fmt.Errorf("record check: %w", err)
	}
	return nil
}

// RecentChecks returns a claim's checks made at or after since, newest first, at most limit of
// them: one find.
func (s *Store) RecentChecks(ctx context.Context, claimID string, since time.Time, limit int64) ([]Check, error) {
	r := mongox.Range{Scope: mongox.Scope(claimID), Desc: true, Limit: int(limit)}
	if !since.IsZero() {
		// Every key of a check at or after since is greater than <claim>|<since>.
		r.After = mongox.Key(claimID, mongox.Time(since))
	}
	out, err := mongox.Find[Check](ctx, s.c(Checks), r)
	if err != nil {
		return nil, fmt.Errorf("read checks: %w", err)
	}
	return out, nil
}

// LastCheck returns a claim's latest check; ok is false when it has none. One find.
func (s *Store) LastCheck(ctx context.Context, claimID string) (c Check, ok bool, err error) {
	got, err := s.RecentChecks(ctx, claimID, time.Time{}, 1)
	if err != nil || len(got) == 0 {
		return Check{}, false, err
	}
	return got[0], true, nil
}
