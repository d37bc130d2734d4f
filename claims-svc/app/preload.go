package app

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/claims-svc/internal/claims"
	"github.com/svcdev/svc/claims-svc/internal/store"
)

// Seed is a claim for Preload (see claims.Seed).
type Seed = claims.Seed

// Preload grows claims-svc's store at db with claims, through the same code as creates and
// verifications (default quota and intervals): for benchmarks that measure reads at a given
// size (deploy/e2e's scale benchmark). Seeds of one object must come in order, from one caller.
func Preload(ctx context.Context, db *mongo.Database, seeds []Seed) error {
	svc := &claims.Service{Store: store.New(db), ChallengeTTL: 7 * 24 * time.Hour}
	return svc.Preload(ctx, seeds)
}
