package store

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/mongox"
)

// Node is a node of a thread's graph, inserted once and never changed. A message node's _id is
// derived from its message, so that a redelivered message.created inserts nothing new.
type Node struct {
	ID         string   `bson:"_id"`
	ThreadID   string   `bson:"thread_id"`
	Type       string   `bson:"type"`
	Title      string   `bson:"title,omitempty"`
	Body       string   `bson:"body"`
	Visibility string   `bson:"visibility"`
	AuthorID   string   `bson:"author_id"`
	AuthorHash string   `bson:"author_hash"`
	Confidence *float64 `bson:"confidence,omitempty"`
	// Supersedes lists the nodes a decision supersedes (its supersedes edges and validity facts
	// follow its insert).
	Supersedes []string  `bson:"supersedes,omitempty"`
	MessageID  string    `bson:"message_id,omitempty"`
	SourceID   string    `bson:"source_id,omitempty"`
	CreatedAt  time.Time `bson:"created_at"`
	Events     []string  `bson:"_events,omitempty"`
}

// InsertNode stores a new node; ErrTaken when its _id exists.
func (s *Store) InsertNode(ctx context.Context, n *Node) error { return s.insert(ctx, Nodes, n) }

// Node reads a node; mongox.ErrNotFound if there is none.
func (s *Store) Node(ctx context.Context, id string) (*Node, error) {
	var n Node
	if err := mongox.FindOne(ctx, s.c(Nodes), mongox.ByID(id), &n); err != nil {
		return nil, err
	}
	return &n, nil
}

// NodesOf lists a thread's nodes, oldest first.
func (s *Store) NodesOf(ctx context.Context, threadID string) ([]Node, error) {
	return mongox.FindAll[Node](ctx, s.c(Nodes), byThread(threadID), oldestFirst())
}

// NodesByID reads the nodes with the given ids, in no particular order.
func (s *Store) NodesByID(ctx context.Context, ids []string) ([]Node, error) {
	return mongox.FindAll[Node](ctx, s.c(Nodes), bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}})
}

// AddNodes stores nodes whose _id names what they record, in one command; existing ones are
// left as they are.
func (s *Store) AddNodes(ctx context.Context, ns []Node) error {
	_, err := mongox.InsertNew(ctx, s.c(Nodes), ns)
	return err
}

// NodesOfType lists the nodes of one type in the given threads, oldest first.
func (s *Store) NodesOfType(ctx context.Context, threadIDs []string, typ string) ([]Node, error) {
	return mongox.FindAll[Node](ctx, s.c(Nodes), bson.D{{Key: "thread_id", Value: bson.D{{Key: "$in", Value: threadIDs}}}, {Key: "type", Value: typ}},
		oldestFirst())
}
