package app

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
)

// Preloader grows graph-svc's store, for benchmarks that measure reads at a given size
// (deploy/e2e's scale benchmark), through the service's own code over its ordinary store: every
// list write is a blind insert keyed by its data, so there is nothing to stage: messages through
// the message projection (in the batches given: their nodes, the thread's graph and messages,
// the memory index of both participants), and tracked sources as an ingest whose first pull
// failed leaves them.
type Preloader struct {
	svc *graph.Service
}

// NewPreloader returns a preloader of graph-svc's store at db, with the default quotas and
// schedule (GRAPH_PULL_INTERVAL, GRAPH_PULL_SCAN).
func NewPreloader(db *mongo.Database) *Preloader {
	return &Preloader{svc: &graph.Service{Store: store.New(db), Limits: graph.DefaultLimits,
		Schedule: graph.Schedule{Interval: 6 * time.Hour, Scan: 5 * time.Minute}}}
}

// Messages projects messages of mailbox-svc (message.created's data), in order.
func (p *Preloader) Messages(ctx context.Context, msgs []contract.MessageCreatedData) error {
	if err := p.svc.ProjectMessages(ctx, msgs); err != nil {
		return fmt.Errorf("preload messages: %w", err)
	}
	return nil
}

// Sources adds tracked sources of the URLs to the owner's self-ingest thread, each with a failed
// first pull.
func (p *Preloader) Sources(ctx context.Context, ownerID, ownerHash string, urls []string) error {
	c := &contract.Principal{ObjectID: ownerID, Hash: ownerHash, Owner: true}
	if err := p.svc.PreloadSources(ctx, c, urls, "preloaded: not fetched"); err != nil {
		return fmt.Errorf("preload sources: %w", err)
	}
	return nil
}
