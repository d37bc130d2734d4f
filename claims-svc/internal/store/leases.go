package store

import (
	"context"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// TakeLease reserves the scheduled re-check of one claim in one period (key) for the replica
// that asks first; false, without error, when another replica holds it.
func (s *Store) TakeLease(ctx context.Context, key string, expires time.Time) (bool, error) {
	return mongox.TakeLease(ctx, s.c(Leases), key, expires)
}

// SweepLeases deletes the leases that expired before now (FerretDB has no TTL indexes).
func (s *Store) SweepLeases(ctx context.Context, now time.Time) error {
	return mongox.SweepLeases(ctx, s.c(Leases), now)
}
