package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// Hide marks an item hidden by the box owner. Its _id is the item id: hiding twice is one mark.
// The lists show it hidden by themselves (Tombstone, UnlistItem), so no page reads these marks.
type Hide struct {
	ItemID   string    `bson:"_id"`
	FeedID   string    `bson:"feed_id"`
	HiddenAt time.Time `bson:"hidden_at"`
}

// HideItem records that an item is hidden.
func (s *Store) HideItem(ctx context.Context, h Hide) error {
	if err := mongox.InsertOnce(ctx, s.c(Hidden), h); err != nil {
		return fmt.Errorf("store hidden items: %w", err)
	}
	return nil
}

// Tombstone turns an item's entry in its box's list into a tombstone: an upsert by _id, so that
// the consumer's insert of the entry, should it come later, finds it and leaves it so.
func (s *Store) Tombstone(ctx context.Context, it *Item) error {
	set := bson.D{{Key: "$set", Value: bson.D{{Key: "hidden", Value: true}, {Key: "item", Value: tombstone(it)}}}}
	if err := mongox.Upsert(ctx, s.c(Pages), itemKey(it.FeedID, it.ID, it.PostedAt), set); err != nil {
		return fmt.Errorf("store hidden items: %w", err)
	}
	return nil
}

// HiddenOf reports which of the given items are hidden (one find by _id, $in).
func (s *Store) HiddenOf(ctx context.Context, itemIDs []string) (map[string]bool, error) {
	hs, err := mongox.FindIn[Hide](ctx, s.c(Hidden), itemIDs, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("store hidden items: %w", err)
	}
	out := make(map[string]bool, len(hs))
	for _, h := range hs {
		out[h.ItemID] = true
	}
	return out, nil
}

// HideRows takes a hidden item out of the network's feed (UnlistItem) and, once per item, out of
// the feed's counters.
func (s *Store) HideRows(ctx context.Context, it *Item) error {
	m := countedMark{id: markID(counterHidden, it.ID), counters: []string{CounterFeed, CounterItems}, delta: -1}
	if err := s.countMarks(ctx, []countedMark{m}, nil); err != nil {
		return err
	}
	return s.UnlistItem(ctx, Row{Kind: KindItem, BoxID: it.FeedID, ItemID: it.ID, At: it.PostedAt})
}

// tombstone is what a hidden item's entry keeps of it: its id, box and time.
func tombstone(it *Item) Item {
	return Item{ID: it.ID, FeedID: it.FeedID, PostedAt: it.PostedAt, Tags: []string{}}
}
