package app

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/webhook-svc/internal/store"
	"github.com/svcdev/svc/webhook-svc/internal/webhook"
)

// Seed is a subscription for Preload (see webhook.Seed).
type Seed = webhook.Seed

// Kinds of seed.
const (
	SeedWebhook = store.KindWebhook
	SeedContext = store.KindContext
)

// Preload grows webhook-svc's store at db with subscriptions, as creates store them (their
// quota places included), in bulk: for benchmarks that measure reads at a given size (deploy/e2e's
// scale benchmark). Every quota scope the seeds fill must be new, filled by one call, within the
// default quotas.
func Preload(ctx context.Context, db *mongo.Database, seeds []Seed) error {
	return (&webhook.Subscriptions{Store: store.New(db)}).Preload(ctx, seeds)
}
