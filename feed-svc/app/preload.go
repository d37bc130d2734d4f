package app

import (
	"context"
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/feed-svc/internal/consumers"
	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// Preloader grows feed-svc's store with events, for benchmarks that measure reads at a given
// size (deploy/e2e's scale benchmark), while the service's consumer is not fed the same events:
// the network projection handles them in chunks, as it handles a consumer's fetch, after the
// records publishing writes of the items among them. Events of one object must be handed over in
// order, as one partition would. Not safe for concurrent use.
type Preloader struct {
	st *store.Store
	n  *consumers.Network
}

// preloadChunk is how many events the projection is handed at once.
const preloadChunk = 1000

// NewPreloader returns a preloader of feed-svc's store at db.
func NewPreloader(db *mongo.Database) *Preloader {
	st := store.New(db)
	return &Preloader{st: st, n: &consumers.Network{Store: st}}
}

// Load stores the records of evs' items and projects evs, preloadChunk events at a time.
func (p *Preloader) Load(ctx context.Context, evs []events.Event) error {
	for chunk := range slices.Chunk(evs, preloadChunk) {
		var items []store.Item
		for _, ev := range chunk {
			if ev.Type != events.FeedItemPublished {
				continue
			}
			var d contract.FeedItemPublishedData
			if err := ev.Decode(&d); err != nil {
				return fmt.Errorf("preload %s: %w", ev.ID, err)
			}
			items = append(items, consumers.ItemOf(ev, d))
		}
		if err := p.st.InsertItems(ctx, items); err != nil {
			return fmt.Errorf("preload: %w", err)
		}
		if err := p.n.Handle(ctx, chunk); err != nil {
			return fmt.Errorf("preload: %w", err)
		}
	}
	return nil
}

// Preload loads evs into feed-svc's store at db (NewPreloader, Load).
func Preload(ctx context.Context, db *mongo.Database, evs []events.Event) error {
	return NewPreloader(db).Load(ctx, evs)
}
