package store

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/mongox"
)

// Hide marks an item hidden by the box owner. Its _id is the item id: hiding twice is one mark.
type Hide struct {
	ItemID   string    `bson:"_id"`
	FeedID   string    `bson:"feed_id"`
	HiddenAt time.Time `bson:"hidden_at"`
}

// HideItem records that an item is hidden.
func (s *Store) HideItem(ctx context.Context, h Hide) error {
	return mongox.InsertOnce(ctx, s.c(Hidden), h)
}

// HiddenAmong returns which of the given item ids are hidden.
func (s *Store) HiddenAmong(ctx context.Context, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	marks, err := mongox.FindAll[Hide](ctx, s.c(Hidden), bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}})
	if err != nil {
		return nil, err
	}
	for _, m := range marks {
		out[m.ItemID] = true
	}
	return out, nil
}
