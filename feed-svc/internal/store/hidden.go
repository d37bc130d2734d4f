package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

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

// IsHidden reports whether an item is hidden (a point read).
func (s *Store) IsHidden(ctx context.Context, itemID string) (bool, error) {
	if s.load != nil {
		return false, nil // a preload hides nothing
	}
	var h Hide
	err := mongox.FindOne(ctx, s.c(Hidden), mongox.ByID(itemID), &h)
	switch {
	case errors.Is(err, mongox.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("store hidden items: %w", err)
	}
	return true, nil
}

// HideRows takes a hidden item out of the network's feed (UnlistItem) and, once per item, out of
// the feed's counters.
func (s *Store) HideRows(ctx context.Context, it *Item) error {
	added, err := s.Mark(ctx, counterHidden, it.ID)
	if err != nil {
		return err
	}
	if added {
		for _, c := range []string{CounterFeed, CounterItems} {
			if err := s.Add(ctx, c, -1); err != nil {
				return err
			}
		}
	}
	return s.UnlistItem(ctx, Row{Kind: KindItem, BoxID: it.FeedID, ItemID: it.ID, At: it.PostedAt})
}

// tombstone is what a hidden item's entry keeps of it: its id, box and time.
func tombstone(it *Item) Item {
	return Item{ID: it.ID, FeedID: it.FeedID, PostedAt: it.PostedAt, Tags: []string{}}
}
