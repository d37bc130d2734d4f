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

// InsertItems stores the records of new items as publishing does, many a command (a preload's);
// one stored already is left as it is.
func (s *Store) InsertItems(ctx context.Context, items []Item) error {
	if _, err := mongox.InsertNewInBatches(ctx, s.c(Items), items, batch); err != nil {
		return fmt.Errorf("store items: %w", err)
	}
	return nil
}

func itemKey(feedID, itemID string, posted time.Time) string {
	return mongox.Key("i", mongox.IDPart(feedID), at(posted), mongox.IDPart(itemID))
}

// ItemsScope is the scope of a box's feed items.
func ItemsScope(feedID string) string { return mongox.Scope("i", mongox.IDPart(feedID)) }

// ListItems inserts items into their boxes' lists once each (keyed by time and id); publishing
// does it before it answers and the consumer of the item's event again, which repairs a crash
// between the two writes. It reports which this call added.
func (s *Store) ListItems(ctx context.Context, items ...Item) ([]bool, error) {
	docs := make([]any, len(items))
	for i, it := range items {
		it.Events = nil
		docs[i] = keyed[ListedItem]{ID: itemKey(it.FeedID, it.ID, it.PostedAt), V: ListedItem{Item: it}}
	}
	return s.insert(ctx, docs...)
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

// ListedItem is an entry of a box's list, as the list keeps it: the item, or a tombstone (only its
// id and time) once it is hidden.
type ListedItem struct {
	Item   `bson:"item"`
	Hidden bool `bson:"hidden,omitempty"`
}

// ItemsPage reads a page of a box's items, newest first, below before (a key of the list; "":
// from the newest); next is the key to pass for the following page ("": none left). One find.
func (s *Store) ItemsPage(ctx context.Context, feedID, before string, limit int) ([]ListedItem, string, error) {
	return values[ListedItem](ctx, s, ItemsScope(feedID), before, limit)
}
