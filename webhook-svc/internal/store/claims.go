package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/mongox"
)

// ClaimKey names the claim of attempt n of a delivery in slot, whose lease ends at end:
// <end>|<delivery>|<attempt>|<slot>. Replicas racing for one attempt compute the same end (the
// delivery's stored next attempt plus slot leases), so they race for one key; and the claims
// whose lease ended long ago are the start of the collection's range.
func ClaimKey(deliveryID string, n, slot int, end time.Time) string {
	return mongox.Key(mongox.Time(end.UTC().Truncate(time.Millisecond)), mongox.IDPart(deliveryID), mongox.Seq(int64(n)), mongox.Seq(int64(slot)))
}

// Claim takes the right to make one attempt: the first insert of key wins, on every replica and
// every backend. It reports false when another replica holds it.
func (s *Store) Claim(ctx context.Context, key string) (bool, error) {
	_, err := s.c(AttemptClaims).InsertOne(ctx, bson.D{{Key: "_id", Value: key}})
	switch {
	case mongox.IsDuplicateKey(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("claim %s: %w", key, err)
	}
	return true, nil
}

// SweepClaims deletes the claims whose lease ended before cutoff (FerretDB has no TTL indexes):
// one range delete.
func (s *Store) SweepClaims(ctx context.Context, cutoff time.Time) (int64, error) {
	return mongox.DeleteRange(ctx, s.c(AttemptClaims), mongox.Range{Before: mongox.Time(cutoff.UTC().Truncate(time.Millisecond))})
}
