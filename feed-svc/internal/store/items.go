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
// of the events its insert produced (events.EventsField), staged in the outbox before it. The
// item is stored once as the record (collection items, by id) and once as an entry of its box's
// list (BoxItems), which the box's pages read.
//
// An item whose author is private keeps no name or hash of the author at all: nothing that
// could identify it can leak from a read, a page or an event.
type Item struct {
	ID            string    `bson:"_id"`
	FeedID        string    `bson:"feed_id"`
	Title         string    `bson:"title"`
	Body          string    `bson:"body"`
	Tags          []string  `bson:"tags"`
	AuthorID      string    `bson:"author_id,omitempty"`
	AuthorHash    string    `bson:"author_hash,omitempty"`
	AuthorName    string    `bson:"author_name,omitempty"`
	AuthorPrivate bool      `bson:"author_private,omitempty"`
	PostedAt      time.Time `bson:"posted_at"`
	Events        []string  `bson:"_events,omitempty"`
}

// InsertItem stores a new item with its pending events.
func (s *Store) InsertItem(ctx context.Context, it *Item) error {
	if _, err := s.c(Items).InsertOne(ctx, it); err != nil {
		return fmt.Errorf("store items: %w", err)
	}
	return nil
}

// ListItem appends an item to its box's list once (by item id); publishing does it before it
// answers and the consumer of its event again, which repairs a crash between the two writes. It
// reports whether this call added it.
func (s *Store) ListItem(ctx context.Context, it Item) (bool, error) {
	it.Events = nil
	_, added, err := appendOnce(ctx, s, BoxItems(it.FeedID), it.ID, it)
	return added, err
}

// Item returns one item of a feed, or mongox.ErrNotFound.
func (s *Store) Item(ctx context.Context, feedID, itemID string) (*Item, error) {
	var it Item
	err := mongox.FindOne(ctx, s.c(Items), mongox.ByID(itemID), &it,
		options.FindOne().SetProjection(bson.D{{Key: events.EventsField, Value: 0}}))
	if err != nil {
		return nil, fmt.Errorf("store items: %w", err)
	}
	if it.FeedID != feedID {
		return nil, fmt.Errorf("store items: %w", mongox.ErrNotFound)
	}
	return &it, nil
}

// ItemsPage reads a page of a box's items, newest first, with positions below before (0: from
// the newest); next is the position to pass for the following page (0: none left).
func (s *Store) ItemsPage(ctx context.Context, feedID string, before int64, limit int) ([]mongox.Entry[Item], int64, error) {
	return page[Item](ctx, s, BoxItems(feedID), before, limit)
}
