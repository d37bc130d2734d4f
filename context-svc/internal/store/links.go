package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// Link is a context link: a public address composing selected sources.
type Link struct {
	ID        string    `bson:"_id"`
	ObjectID  string    `bson:"object_id"`
	Title     string    `bson:"title"`
	Note      string    `bson:"note"`
	SourceIDs []string  `bson:"source_ids"`
	CreatedAt time.Time `bson:"created_at"`
}

// InsertLink stores a link.
func (s *Store) InsertLink(ctx context.Context, l *Link) error {
	if _, err := s.links.InsertOne(ctx, l); err != nil {
		return fmt.Errorf("store links: %w", err)
	}
	return nil
}

// Link returns a link by id, or mongox.ErrNotFound.
func (s *Store) Link(ctx context.Context, id string) (*Link, error) {
	var l Link
	if err := mongox.FindOne(ctx, s.links, mongox.ByID(id), &l); err != nil {
		return nil, fmt.Errorf("store links: %w", err)
	}
	return &l, nil
}

// LinkPage pages through an object's links, newest first.
type LinkPage struct {
	ObjectID string
	Before   string // link id cursor
	Limit    int
}

// ListLinks lists an object's links.
func (s *Store) ListLinks(ctx context.Context, q LinkPage) ([]Link, error) {
	filter := bson.D{{Key: "object_id", Value: q.ObjectID}}
	if q.Before != "" {
		filter = append(filter, bson.E{Key: "_id", Value: bson.D{{Key: "$lt", Value: q.Before}}})
	}
	return mongox.FindAll[Link](ctx, s.links, filter, options.Find().SetSort(bson.D{{Key: "_id", Value: -1}}).SetLimit(int64(q.Limit)))
}
