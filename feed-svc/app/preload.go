package app

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/feed-svc/internal/consumers"
	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// Preloader grows feed-svc's store with events in bulk, for benchmarks that measure reads at a
// given size (deploy/e2e's scale benchmark), while the service's consumer is not fed the same
// events. It runs the network consumer's own projection over a store that stages its writes
// (store.NewLoad) and writes them in insertMany batches: a published item's record as publishing
// writes it, the lists' documents under their data keys, the boxes' newest rows, the counts and
// the objects, so the store holds what the consumer would have written, a few commands per
// thousand documents instead of some twenty commands per event. Every document is keyed by its
// data, so the service's own consumer, writing other events beside the preload, never wants a
// key the preload takes. The events must be new (never projected). Events of one object must be
// handed over in order, as one partition would. Not safe for concurrent use.
type Preloader struct {
	st *store.Store
	n  *consumers.Network
}

// preloadFlushAt is how many staged documents make Load write them, which bounds its memory.
const preloadFlushAt = 20000

// NewPreloader returns a preloader of feed-svc's store at db.
func NewPreloader(db *mongo.Database) *Preloader {
	st := store.NewLoad(db)
	return &Preloader{st: st, n: &consumers.Network{Store: st}}
}

// Load projects evs, writing what is staged whenever it grows past preloadFlushAt documents.
func (p *Preloader) Load(ctx context.Context, evs []events.Event) error {
	for _, ev := range evs {
		if ev.Type == events.FeedItemPublished {
			var d contract.FeedItemPublishedData
			if err := ev.Decode(&d); err != nil {
				return fmt.Errorf("preload %s: %w", ev.ID, err)
			}
			posted, _ := time.Parse(time.RFC3339Nano, d.PostedAt)
			it := store.Item{ID: d.ItemID, FeedID: ev.ObjectID, Title: d.Title, Body: d.Body, Tags: d.Tags, PostedAt: posted,
				AuthorID: d.AuthorObjectID, AuthorName: d.AuthorName, AuthorPrivate: d.AuthorHash == nil}
			if d.AuthorHash != nil {
				it.AuthorHash = *d.AuthorHash
			}
			if err := p.st.PreloadItem(ctx, it); err != nil {
				return fmt.Errorf("preload %s: %w", ev.ID, err)
			}
		}
		if err := p.n.Handle(ctx, []events.Event{ev}); err != nil {
			return fmt.Errorf("preload: %w", err)
		}
		if p.st.Staged() >= preloadFlushAt {
			if err := p.Flush(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// Flush writes what Load staged.
func (p *Preloader) Flush(ctx context.Context) error {
	if err := p.st.Flush(ctx); err != nil {
		return fmt.Errorf("preload: %w", err)
	}
	return nil
}

// Preload loads evs and writes them (NewPreloader, Load, Flush).
func Preload(ctx context.Context, db *mongo.Database, evs []events.Event) error {
	p := NewPreloader(db)
	if err := p.Load(ctx, evs); err != nil {
		return err
	}
	return p.Flush(ctx)
}
