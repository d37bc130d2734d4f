package store

import (
	"context"
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
	var stored Feed
	if err := mongox.FindOne(ctx, s.c(Feeds), mongox.ByID(f.ObjectID), &stored); err != nil {
		return nil, fmt.Errorf("store feeds: %w", err)
	}
	return &stored, nil
}

// IsFeed reports whether a box is a feed (a point read, not a count: on FerretDB a count is an
// aggregation).
func (s *Store) IsFeed(ctx context.Context, objectID string) (bool, error) {
	ok, err := s.find(ctx, Feeds, objectID, &Feed{})
	if err != nil {
		return false, fmt.Errorf("store feeds: %w", err)
	}
	return ok, nil
}
