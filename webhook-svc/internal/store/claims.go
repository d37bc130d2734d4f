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

// Claim takes the right to make attempts, one per key, in one unordered insert: the first insert
// of a key wins, on every replica and every backend. It reports, per key, whether this replica
// won it (false: another replica holds it).
func (s *Store) Claim(ctx context.Context, keys ...string) ([]bool, error) {
	docs := make([]bson.D, len(keys))
	for i, key := range keys {
		docs[i] = bson.D{{Key: "_id", Value: key}}
	}
	won, err := mongox.InsertNew(ctx, s.c(AttemptClaims), docs)
	if err != nil {
		return nil, fmt.Errorf("claim attempts: %w", err)
	}
	return won, nil
}

// SweepClaims deletes the claims whose lease ended before cutoff (FerretDB has no TTL indexes):
// one range delete.
func (s *Store) SweepClaims(ctx context.Context, cutoff time.Time) (int64, error) {
	return mongox.DeleteRange(ctx, s.c(AttemptClaims), mongox.Range{Before: mongox.Time(cutoff.UTC().Truncate(time.Millisecond))})
}
