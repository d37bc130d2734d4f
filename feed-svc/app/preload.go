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
	"github.com/svcdev/svc/pkg/mongox"
)

// Preload grows feed-svc's store at db with events, through the same code as the service: a
// published item's record as publishing writes it, then the network consumer's projection of
// each event (without validators: a loaded store is read after loading). It is for benchmarks
// that measure reads at a given size (deploy/e2e's scale benchmark); events of one object must
// be handed over in order, as one partition would.
func Preload(ctx context.Context, db *mongo.Database, evs []events.Event) error {
	st := store.New(db)
	n := &consumers.Network{Store: st}
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
			if err := mongox.InsertOnce(ctx, db.Collection(store.Items), it); err != nil {
				return fmt.Errorf("preload %s: %w", ev.ID, err)
			}
		}
		if err := n.Handle(ctx, []events.Event{ev}); err != nil {
			return err
		}
	}
	return nil
}
