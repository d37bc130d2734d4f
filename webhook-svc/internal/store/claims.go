package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/mongox"
)

// Claim takes the right to make one attempt: the first insert of id wins, on every replica and
// every backend. It reports false when another replica holds it.
func (s *Store) Claim(ctx context.Context, id string, expiresAt time.Time) (bool, error) {
	_, err := s.c(Claims).InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "expires_at", Value: expiresAt}})
	switch {
	case mongox.IsDuplicateKey(err):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("claim %s: %w", id, err)
	}
	return true, nil
}

// SweepClaims deletes claims that expired before cutoff (FerretDB has no TTL indexes).
func (s *Store) SweepClaims(ctx context.Context, cutoff time.Time) (int64, error) {
	res, err := s.c(Claims).DeleteMany(ctx, bson.D{{Key: "expires_at", Value: bson.D{{Key: "$lt", Value: cutoff}}}})
	if err != nil {
		return 0, fmt.Errorf("sweep claims: %w", err)
	}
	return res.DeletedCount, nil
}
