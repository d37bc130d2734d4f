package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// Hide marks an item hidden by the box owner. Its _id is the item id: hiding twice is one mark,
// and a page checks each item it shows with one point read.
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

// HiddenAmong returns which of the given item ids are hidden, one point read each (a page names
// a bounded number of items).
func (s *Store) HiddenAmong(ctx context.Context, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, id := range ids {
		var h Hide
		err := mongox.FindOne(ctx, s.c(Hidden), mongox.ByID(id), &h)
		switch {
		case errors.Is(err, mongox.ErrNotFound):
		case err != nil:
			return nil, fmt.Errorf("store hidden items: %w", err)
		default:
			out[id] = true
		}
	}
	return out, nil
}
