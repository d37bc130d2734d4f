package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
)

// Item is one feed item. Items are never updated (hiding inserts a Hide); an item lists the ids
// of the events its insert produced (events.EventsField), staged in the outbox before it.
type Item struct {
	ID         string    `bson:"_id"`
	FeedID     string    `bson:"feed_id"`
	Title      string    `bson:"title"`
	Body       string    `bson:"body"`
	Tags       []string  `bson:"tags"`
	AuthorID   string    `bson:"author_id"`
	AuthorHash string    `bson:"author_hash"`
	AuthorName string    `bson:"author_name"`
	PostedAt   time.Time `bson:"posted_at"`
	Events     []string  `bson:"_events,omitempty"`
}

// InsertItem stores a new item with its pending events.
func (s *Store) InsertItem(ctx context.Context, it *Item) error {
	if _, err := s.c(Items).InsertOne(ctx, it); err != nil {
		return fmt.Errorf("store items: %w", err)
	}
	return nil
}

// Item returns one item of a feed, or mongox.ErrNotFound.
func (s *Store) Item(ctx context.Context, feedID, itemID string) (*Item, error) {
	var it Item
	err := mongox.FindOne(ctx, s.c(Items), bson.D{{Key: "_id", Value: itemID}, {Key: "feed_id", Value: feedID}}, &it)
	if err != nil {
		return nil, fmt.Errorf("store items: %w", err)
	}
	return &it, nil
}

// ItemsPage returns up to limit items of a feed, newest first, older than the item before (all
// when before is ""). Item ids grow with time, so a page boundary never moves when items are
// added.
func (s *Store) ItemsPage(ctx context.Context, feedID, before string, limit int) ([]Item, error) {
	filter := bson.D{{Key: "feed_id", Value: feedID}}
	if before != "" {
		filter = append(filter, bson.E{Key: "_id", Value: bson.D{{Key: "$lt", Value: before}}})
	}
	return mongox.FindAll[Item](ctx, s.c(Items), filter, options.Find().
		SetSort(bson.D{{Key: "_id", Value: -1}}).SetLimit(int64(limit)).
		SetProjection(bson.D{{Key: events.EventsField, Value: 0}}))
}
