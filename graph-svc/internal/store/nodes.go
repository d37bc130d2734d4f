package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

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
	// ValidFrom and ValidUntil are a decision's world time: when what it says holds, as its
	// author says (either end may be open). Its system time is CreatedAt and the validity fact
	// a later decision gives it.
	ValidFrom  *time.Time `bson:"valid_from,omitempty"`
	ValidUntil *time.Time `bson:"valid_until,omitempty"`
	// Supersedes lists the nodes a decision supersedes (its supersedes edges and validity facts
	// follow its insert).
	Supersedes []string `bson:"supersedes,omitempty"`
	// PrivateSupersedes are those of Supersedes that are owner_only nodes of the decision's
	// author: their supersedes edges are shown to that author only.
	PrivateSupersedes []string `bson:"private_supersedes,omitempty"`
	// DerivedFrom is the node a source's changed text follows (its derived_from edge).
	DerivedFrom string `bson:"derived_from,omitempty"`
	MessageID   string `bson:"message_id,omitempty"`
	// PrevNodeID is, on a message node, the node of the thread's message it follows, as its
	// message.created event named it (empty for a thread's first, and for events of releases
	// that did not name it: a read derives those).
	PrevNodeID string `bson:"prev_node_id,omitempty"`
	// MsgSeq is, on a message node, its position in its thread's messages: the message that
	// follows it takes the next, with no read of the list (see Store.AppendMessages).
	MsgSeq    int64     `bson:"msg_seq,omitempty"`
	SourceID  string    `bson:"source_id,omitempty"`
	CreatedAt time.Time `bson:"created_at"`
	Events    []string  `bson:"_events,omitempty"`
}

// InsertNode stores a new node; mongox.ErrTaken when its _id exists.
func (s *Store) InsertNode(ctx context.Context, n *Node) error {
	return mongox.Insert(ctx, s.c(Nodes), n)
}

// Node reads a node; mongox.ErrNotFound if there is none.
func (s *Store) Node(ctx context.Context, id string) (*Node, error) {
	return byID[Node](ctx, s, Nodes, id)
}

// StoredNodes reports which of ids are stored nodes, each with its position in its thread's
// messages (0 for a node that is not a message's, or was stored by a release that did not record
// it): one find by _id (per mongox.MaxIDIn ids), projected to those fields.
func (s *Store) StoredNodes(ctx context.Context, ids []string) (map[string]int64, error) {
	docs, err := mongox.FindIn[struct {
		ID     string `bson:"_id"`
		MsgSeq int64  `bson:"msg_seq"`
	}](ctx, s.c(Nodes), ids, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}, {Key: "msg_seq", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("store nodes: %w", err)
	}
	out := make(map[string]int64, len(ids))
	for _, d := range docs {
		out[d.ID] = d.MsgSeq
	}
	return out, nil
}

// AddNodes stores nodes whose _id names what they record, in one command; existing ones are
// left as they are. It reports which were inserted now.
func (s *Store) AddNodes(ctx context.Context, ns []Node) ([]bool, error) {
	return mongox.InsertNew(ctx, s.c(Nodes), ns)
}
