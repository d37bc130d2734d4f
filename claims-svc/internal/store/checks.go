package store

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"

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

// InsertCheck records a check.
func (s *Store) InsertCheck(ctx context.Context, c *Check) error { return s.insert(ctx, Checks, c) }

// RecentChecks returns a claim's checks made at or after since, newest first, at most limit.
func (s *Store) RecentChecks(ctx context.Context, claimID string, since time.Time, limit int64) ([]Check, error) {
	return mongox.FindAll[Check](ctx, s.c(Checks),
		bson.D{{Key: "claim_id", Value: claimID}, {Key: "at", Value: bson.D{{Key: "$gte", Value: since}}}},
		mopts.Find().SetSort(bson.D{{Key: "at", Value: -1}, {Key: "_id", Value: -1}}).SetLimit(limit))
}

// LastChecks returns the latest check of each of the given claims that has one.
func (s *Store) LastChecks(ctx context.Context, claimIDs []string) (map[string]Check, error) {
	all, err := mongox.FindAll[Check](ctx, s.c(Checks), bson.D{{Key: "claim_id", Value: bson.D{{Key: "$in", Value: claimIDs}}}})
	if err != nil {
		return nil, err
	}
	out := make(map[string]Check, len(claimIDs))
	for _, c := range all {
		if cur, ok := out[c.ClaimID]; !ok || c.At.After(cur.At) || (c.At.Equal(cur.At) && c.ID > cur.ID) {
			out[c.ClaimID] = c
		}
	}
	return out, nil
}
