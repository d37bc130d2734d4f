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

// Source is an object context source. A URL source keeps what was last fetched from it.
type Source struct {
	ID        string     `bson:"_id"`
	ObjectID  string     `bson:"object_id"`
	Kind      string     `bson:"kind"`
	Title     string     `bson:"title"`
	URL       string     `bson:"url,omitempty"`
	Text      string     `bson:"text,omitempty"`
	CreatedAt time.Time  `bson:"created_at"`
	Content   string     `bson:"content,omitempty"`
	FetchedAt *time.Time `bson:"fetched_at,omitempty"`
	// FetchError is why the last fetch failed ("" after a good one).
	FetchError string           `bson:"fetch_error,omitempty"`
	Outbox     []events.Pending `bson:"_outbox,omitempty"`
}

// InsertSource stores a new source with its pending events.
func (s *Store) InsertSource(ctx context.Context, src *Source) error {
	if _, err := s.sources.InsertOne(ctx, src); err != nil {
		return fmt.Errorf("store sources: %w", err)
	}
	return nil
}

// CountSources counts an object's sources.
func (s *Store) CountSources(ctx context.Context, objectID string) (int64, error) {
	n, err := s.sources.CountDocuments(ctx, bson.D{{Key: "object_id", Value: objectID}})
	if err != nil {
		return 0, fmt.Errorf("store sources: %w", err)
	}
	return n, nil
}

// SourcePage pages through an object's sources, oldest first.
type SourcePage struct {
	ObjectID string
	After    string // source id cursor
	Limit    int
}

// ListSources lists an object's sources.
func (s *Store) ListSources(ctx context.Context, q SourcePage) ([]Source, error) {
	filter := bson.D{{Key: "object_id", Value: q.ObjectID}}
	if q.After != "" {
		filter = append(filter, bson.E{Key: "_id", Value: bson.D{{Key: "$gt", Value: q.After}}})
	}
	opts := options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(q.Limit)).SetProjection(withoutOutbox)
	return findAll[Source](ctx, s.sources, filter, opts)
}

// SourcesByID returns the object's sources among ids, in the order of ids; unknown ids are
// left out.
func (s *Store) SourcesByID(ctx context.Context, objectID string, ids []string) ([]Source, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	filter := bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}, {Key: "object_id", Value: objectID}}
	found, err := findAll[Source](ctx, s.sources, filter, options.Find().SetProjection(withoutOutbox))
	if err != nil {
		return nil, err
	}
	byIDs := make(map[string]Source, len(found))
	for _, src := range found {
		byIDs[src.ID] = src
	}
	out := make([]Source, 0, len(ids))
	for _, id := range ids {
		if src, ok := byIDs[id]; ok {
			out = append(out, src)
		}
	}
	return out, nil
}

// RecordFetch keeps the result of fetching a URL source. A failed fetch keeps the content of the
// last good one.
func (s *Store) RecordFetch(ctx context.Context, id, content, fetchErr string, at time.Time) error {
	set := bson.D{{Key: "fetched_at", Value: at}, {Key: "fetch_error", Value: fetchErr}}
	if fetchErr == "" {
		set = append(set, bson.E{Key: "content", Value: content})
	}
	if _, err := s.sources.UpdateOne(ctx, mongox.ByID(id), bson.D{{Key: "$set", Value: set}}); err != nil {
		return fmt.Errorf("store sources: %w", err)
	}
	return nil
}
