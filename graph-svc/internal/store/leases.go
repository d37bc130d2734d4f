package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// lease reserves the scheduled pull of one source in one period for the replica that inserts it
// first.
type lease struct {
	ID        string    `bson:"_id"`
	ExpiresAt time.Time `bson:"expires_at"`
}

// TakeLease reserves key until expires; false, without error, when another replica holds it.
func (s *Store) TakeLease(ctx context.Context, key string, expires time.Time) (bool, error) {
	err := s.insert(ctx, Leases, lease{ID: key, ExpiresAt: expires})
	if errors.Is(err, ErrTaken) {
		return false, nil
	}
	return err == nil, err
}

// SweepLeases deletes the leases that expired before now (FerretDB has no TTL indexes).
func (s *Store) SweepLeases(ctx context.Context, now time.Time) error {
	if _, err := s.c(Leases).DeleteMany(ctx, bson.D{{Key: "expires_at", Value: bson.D{{Key: "$lt", Value: now}}}}); err != nil {
		return fmt.Errorf("store %s: %w", Leases, err)
	}
	return nil
}
