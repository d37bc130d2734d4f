package store

import (
	"context"
	"fmt"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// The lists (mongox.Log) that the network's reads page through, one per read that is shown, each
// appended by the consumer that sees the event, idempotent by the event id. Counters are the
// lengths of lists, never counted at read time. Private objects are in none of them.
const (
	// ListGlobal is the network's feed: creations and items (Row), newest first.
	ListGlobal = "global"
	// ListGlobalItems is the network's feed of items only.
	ListGlobalItems = "global:item"
	// ListGlobalCreated is the network's feed of creations only; its length counts public objects.
	ListGlobalCreated = "global:new_svc"
	// ListHiddenItems counts the items hidden after they entered the network's feed.
	ListHiddenItems = "global:hidden"
	// ListBoxesWithItems counts the public boxes with at least one item in the network's feed.
	ListBoxesWithItems = "boxes:item"
	// ListActivity is public activity (Activity).
	ListActivity = "activity"
	// ListMessages counts the messages to public objects.
	ListMessages = "stats:messages"
	// ListClaimsVerified and ListClaimsLapsed count public objects' claim events.
	ListClaimsVerified = "stats:claims_verified"
	ListClaimsLapsed   = "stats:claims_lapsed"
)

// BoxItems is the list of a box's feed items (Item), newest first.
func BoxItems(boxID string) string { return "items:" + boxID }

// Analytics kinds, each counted per object and UTC day.
const (
	CountMessages       = "messages"
	CountFeedItems      = "feed_items"
	CountContextUpdates = "context_updates"
	CountVerifiedClaims = "verified_claims"
)

// AnalyticsList counts one kind of an object's events on one UTC day.
func AnalyticsList(objectID, kind string, day time.Time) string {
	return "an:" + objectID + ":" + kind + ":" + day.UTC().Format(time.DateOnly)
}

// Row kinds of the network's feed.
const (
	KindNewSvc = "new_svc" // an object was created
	KindItem   = "item"    // an item was published to a feed
)

// Row is one row of the network's feed as its list keeps it: what it shows, less what a page
// looks up (the current hashes of the box and the author, an item's body and whether it is
// hidden), so that pages of feed.txt never read a body.
type Row struct {
	Kind       string    `bson:"kind"`
	EventID    string    `bson:"event_id"`
	BoxID      string    `bson:"box_id"`
	ItemID     string    `bson:"item_id,omitempty"`
	Title      string    `bson:"title"`
	Tags       []string  `bson:"tags,omitempty"`
	AuthorID   string    `bson:"author_id,omitempty"`
	AuthorName string    `bson:"author_name,omitempty"`
	At         time.Time `bson:"at"`
}

// Activity is one entry of public activity.
type Activity struct {
	Type  string    `bson:"type"`
	BoxID string    `bson:"box_id"`
	At    time.Time `bson:"at"`
}

// Mark is the empty value of a list that only counts.
type Mark struct{}

func appendOnce[T any](ctx context.Context, s *Store, list, key string, v T) (int64, bool, error) {
	var seq int64
	var added bool
	var err error
	if s.load != nil {
		seq, added, err = mongox.LoadAppend(ctx, s.load.lists, list, key, v)
	} else {
		seq, added, err = mongox.AppendOnce(ctx, s.lists, list, key, v)
	}
	if err != nil {
		return 0, false, fmt.Errorf("store list %s: %w", list, err)
	}
	return seq, added, nil
}

func page[T any](ctx context.Context, s *Store, list string, before int64, limit int) ([]mongox.Entry[T], int64, error) {
	entries, next, err := mongox.Page[T](ctx, s.lists, list, before, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("store list %s: %w", list, err)
	}
	return entries, next, nil
}

// AppendRow appends a row to a list of the network's feed once per key (the event id).
func (s *Store) AppendRow(ctx context.Context, list, key string, r Row) (int64, bool, error) {
	return appendOnce(ctx, s, list, key, r)
}

// Rows reads a page of a list of the network's feed.
func (s *Store) Rows(ctx context.Context, list string, before int64, limit int) ([]mongox.Entry[Row], int64, error) {
	return page[Row](ctx, s, list, before, limit)
}

// AppendActivity appends an entry of public activity once per key (the event id).
func (s *Store) AppendActivity(ctx context.Context, key string, a Activity) error {
	_, _, err := appendOnce(ctx, s, ListActivity, key, a)
	return err
}

// ActivityPage reads a page of public activity.
func (s *Store) ActivityPage(ctx context.Context, before int64, limit int) ([]mongox.Entry[Activity], int64, error) {
	return page[Activity](ctx, s, ListActivity, before, limit)
}

// Count counts key once in a counting list and reports whether it was counted now.
func (s *Store) Count(ctx context.Context, list, key string) (bool, error) {
	_, added, err := appendOnce(ctx, s, list, key, Mark{})
	return added, err
}

// Len is how many entries a list ever had.
func (s *Store) Len(ctx context.Context, list string) (int64, error) {
	n, err := s.lists.Len(ctx, list)
	if err != nil {
		return 0, fmt.Errorf("store list %s: %w", list, err)
	}
	return n, nil
}
