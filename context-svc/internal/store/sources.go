package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

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
	FetchError string   `bson:"fetch_error,omitempty"`
	Events     []string `bson:"_events,omitempty"`
}

// InsertSource stores a new source with its pending events.
func (s *Store) InsertSource(ctx context.Context, src *Source) error {
	if _, err := s.c(Sources).InsertOne(ctx, src); err != nil {
		return fmt.Errorf("store sources: %w", err)
	}
	return nil
}

// CountSources counts an object's sources.
func (s *Store) CountSources(ctx context.Context, objectID string) (int64, error) {
	n, err := s.c(Sources).CountDocuments(ctx, bson.D{{Key: "object_id", Value: objectID}})
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
	opts := options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(q.Limit)).SetProjection(withoutEvents)
	return findAll[Source](ctx, s.c(Sources), filter, opts)
}

// SourcesByID returns the object's sources among ids, in the order of ids; unknown ids are
// left out.
func (s *Store) SourcesByID(ctx context.Context, objectID string, ids []string) ([]Source, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	filter := bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}, {Key: "object_id", Value: objectID}}
	found, err := findAll[Source](ctx, s.c(Sources), filter, options.Find().SetProjection(withoutEvents))
	if err != nil {
		return nil, err
	}
	byID := make(map[string]Source, len(found))
	for _, src := range found {
		byID[src.ID] = src
	}
	out := make([]Source, 0, len(ids))
	for _, id := range ids {
		if src, ok := byID[id]; ok {
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
	if _, err := s.c(Sources).UpdateOne(ctx, byID(id), bson.D{{Key: "$set", Value: set}}); err != nil {
		return fmt.Errorf("store sources: %w", err)
	}
	return nil
}

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
	if _, err := s.c(Links).InsertOne(ctx, l); err != nil {
		return fmt.Errorf("store links: %w", err)
	}
	return nil
}

// Link returns a link by id.
func (s *Store) Link(ctx context.Context, id string) (*Link, error) {
	var l Link
	err := s.c(Links).FindOne(ctx, byID(id)).Decode(&l)
	if mongox.IsNotFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
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
	return findAll[Link](ctx, s.c(Links), filter, options.Find().SetSort(bson.D{{Key: "_id", Value: -1}}).SetLimit(int64(q.Limit)))
}

// Decision is a decision recorded in one of an object's threads, learned from graph-svc.
type Decision struct {
	ID         string    `bson:"_id"` // object_id:node_id
	ObjectID   string    `bson:"object_id"`
	ThreadID   string    `bson:"thread_id"`
	NodeID     string    `bson:"node_id"`
	Title      string    `bson:"title"`
	Body       string    `bson:"body"`
	Confidence *float64  `bson:"confidence"`
	CreatedAt  time.Time `bson:"created_at"`
}

// RecordDecision stores a decision once (redelivered events change nothing).
func (s *Store) RecordDecision(ctx context.Context, d *Decision) error {
	d.ID = d.ObjectID + ":" + d.NodeID
	if _, err := s.c(Decisions).InsertOne(ctx, d); err != nil && !mongox.IsDuplicateKey(err) {
		return fmt.Errorf("store decisions: %w", err)
	}
	return nil
}

// RecentDecisions returns up to limit decisions of an object, newest first.
func (s *Store) RecentDecisions(ctx context.Context, objectID string, limit int) ([]Decision, error) {
	return findAll[Decision](ctx, s.c(Decisions), bson.D{{Key: "object_id", Value: objectID}},
		options.Find().SetSort(bson.D{{Key: "created_at", Value: -1}}).SetLimit(int64(limit)))
}
