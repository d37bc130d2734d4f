package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// Feed marks a box as a feed. Its _id is the box's object id.
type Feed struct {
	ObjectID  string    `bson:"_id"`
	CreatedAt time.Time `bson:"created_at"`
}

// CreateFeed turns a box into a feed and returns the feed as stored: the first creation wins,
// so turning a box into a feed twice keeps its first date.
func (s *Store) CreateFeed(ctx context.Context, f Feed) (*Feed, error) {
	if err := mongox.InsertOnce(ctx, s.c(Feeds), f); err != nil {
		return nil, err
	}
	return s.Feed(ctx, f.ObjectID)
}

// Feed returns the feed of a box, or mongox.ErrNotFound when the box is not a feed.
func (s *Store) Feed(ctx context.Context, objectID string) (*Feed, error) {
	var f Feed
	if err := mongox.FindOne(ctx, s.c(Feeds), mongox.ByID(objectID), &f); err != nil {
		return nil, fmt.Errorf("store feeds: %w", err)
	}
	return &f, nil
}

// IsFeed reports whether a box is a feed (a point read, not a count: on FerretDB a count is an
// aggregation).
func (s *Store) IsFeed(ctx context.Context, objectID string) (bool, error) {
	var f Feed
	err := mongox.FindOne(ctx, s.c(Feeds), mongox.ByID(objectID), &f)
	switch {
	case errors.Is(err, mongox.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("store feeds: %w", err)
	}
	return true, nil
}
