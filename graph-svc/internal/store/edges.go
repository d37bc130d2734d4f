package store

import (
	"context"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// Edge is an edge of a thread's graph, inserted once and never changed.
type Edge struct {
	ID         string    `bson:"_id"`
	ThreadID   string    `bson:"thread_id"`
	From       string    `bson:"from_node_id"`
	To         string    `bson:"to_node_id"`
	Type       string    `bson:"type"`
	AuthorID   string    `bson:"author_id"`
	AuthorHash string    `bson:"author_hash"`
	MessageID  string    `bson:"message_id,omitempty"`
	SourceID   string    `bson:"source_id,omitempty"`
	CreatedAt  time.Time `bson:"created_at"`
}

// InsertEdge stores a new edge; ErrTaken when its _id exists.
func (s *Store) InsertEdge(ctx context.Context, e *Edge) error { return s.insert(ctx, Edges, e) }

// AddEdge stores an edge whose _id names what it records; an existing one is left as it is.
func (s *Store) AddEdge(ctx context.Context, e *Edge) error { return s.insertOnce(ctx, Edges, e) }

// EdgesOf lists a thread's edges, oldest first.
func (s *Store) EdgesOf(ctx context.Context, threadID string) ([]Edge, error) {
	return mongox.FindAll[Edge](ctx, s.c(Edges), byThread(threadID), oldestFirst())
}
