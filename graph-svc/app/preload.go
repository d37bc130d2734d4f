package app

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
)

// Preloader grows graph-svc's store with messages, for benchmarks that measure reads at a given
// size (deploy/e2e's scale benchmark), through the message projection over the ordinary store
// (in the batches given: their nodes, the thread's graph and messages, the memory index of both
// participants): every list write is a blind insert keyed by its data, so there is nothing to
// stage. (Tracked sources are preloaded from deploy/internal/preload.)
type Preloader struct {
	svc *graph.Service
}

// NewPreloader returns a preloader of graph-svc's store at db, with the default limits.
func NewPreloader(db *mongo.Database) *Preloader {
	return &Preloader{svc: &graph.Service{Store: store.New(db), Limits: graph.DefaultLimits}}
}

// Messages projects messages of mailbox-svc (message.created's data), in order.
func (p *Preloader) Messages(ctx context.Context, msgs []contract.MessageCreatedData) error {
	if err := p.svc.ProjectMessages(ctx, msgs); err != nil {
		return fmt.Errorf("preload messages: %w", err)
	}
	return nil
}
