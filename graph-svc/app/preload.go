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

// Preloader grows graph-svc's store in bulk, for benchmarks that measure reads at a given size
// (deploy/e2e's scale benchmark), while nothing else writes the same threads. It runs graph-svc's
// own code over a store that stages its list appends, sources and pulls (store.NewLoad) and
// writes them in insertMany batches: messages through the message projection (their nodes, the
// thread's graph and msgs lists, the memory index of both participants), and tracked sources as
// an ingest whose first pull failed leaves them. The messages must be new (never projected):
// their nodes are declared fresh, so that the projection reads none. Not safe for concurrent use.
type Preloader struct {
	st  *store.Store
	svc *graph.Service
}

// preloadFlushAt is how many staged documents make a preload write them, which bounds its memory.
const preloadFlushAt = 20000

// NewPreloader returns a preloader of graph-svc's store at db, with the default quotas and
// schedule (GRAPH_PULL_INTERVAL, GRAPH_PULL_SCAN).
func NewPreloader(db *mongo.Database) *Preloader {
	st := store.NewLoad(db)
	return &Preloader{st: st, svc: &graph.Service{Store: st, Limits: graph.DefaultLimits, Schedule: graph.Schedule{Interval: 6 * time.Hour, Scan: 5 * time.Minute}}}
}

// Messages projects messages of mailbox-svc (message.created's data), in order.
func (p *Preloader) Messages(ctx context.Context, msgs []contract.MessageCreatedData) error {
	for _, m := range msgs {
		p.st.Fresh(graph.MessageNodeID(m.MessageID))
	}
	if err := p.svc.ProjectMessages(ctx, msgs); err != nil {
		return fmt.Errorf("preload messages: %w", err)
	}
	return p.flushIfLarge(ctx)
}

// Sources adds tracked sources of the URLs to the owner's self-ingest thread, each with a failed
// first pull.
func (p *Preloader) Sources(ctx context.Context, ownerID, ownerHash string, urls []string) error {
	c := &contract.Principal{ObjectID: ownerID, Hash: ownerHash, Owner: true}
	if err := p.svc.PreloadSources(ctx, c, urls, "preloaded: not fetched"); err != nil {
		return fmt.Errorf("preload sources: %w", err)
	}
	return p.flushIfLarge(ctx)
}

func (p *Preloader) flushIfLarge(ctx context.Context) error {
	if p.st.Staged() < preloadFlushAt {
		return nil
	}
	return p.Flush(ctx)
}

// Flush writes what was staged.
func (p *Preloader) Flush(ctx context.Context) error {
	if err := p.st.Flush(ctx); err != nil {
		return fmt.Errorf("preload: %w", err)
	}
	return nil
}
