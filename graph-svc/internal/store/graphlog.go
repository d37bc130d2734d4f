package store

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// Everything a page of a thread's graph, a page of sources or the scheduled re-pull reads is
// kept in mongox.Log lists (collection graph_log), so that each costs point reads on _id,
// whatever the thread or the store holds:
//
//   - thread:<thread_id>  the thread's graph in the order written: each entry a node (with its
//     body, capped by the node quota) or an edge;
//   - msgs:<thread_id>    the thread's message nodes in the order projected, so that a message's
//     replies_to edge finds the message before it with one point read;
//   - quota lists         one entry per node or edge written (see Reserve);
//   - sources:<thread_id> the thread's tracked sources, pulls:<source_id> their pulls;
//   - due:<bucket>        the sources due for a re-pull in a time bucket.

// GraphItem is an entry of a thread's graph list: a node or an edge.
type GraphItem struct {
	Node *Node `bson:"node,omitempty"`
	Edge *Edge `bson:"edge,omitempty"`
	// MsgSeq is a message node's position in the thread's msgs list.
	MsgSeq int64 `bson:"msg_seq,omitempty"`
}

// MessageRef is an entry of a thread's msgs list.
type MessageRef struct {
	NodeID    string    `bson:"node_id"`
	CreatedAt time.Time `bson:"created_at"`
}

func threadList(threadID string) string { return "thread:" + threadID }
func msgsList(threadID string) string   { return "msgs:" + threadID }

// Log is the lists of graph_log.
func (s *Store) Log() mongox.Log { return s.log }

// AppendGraph appends a node or an edge to its thread's graph.
func (s *Store) AppendGraph(ctx context.Context, threadID string, it GraphItem) (int64, error) {
	return appendTo(ctx, s, threadList(threadID), it)
}

// GraphPage reads up to limit items of a thread's graph, newest first, below position before.
func (s *Store) GraphPage(ctx context.Context, threadID string, before int64, limit int) ([]mongox.Entry[GraphItem], int64, error) {
	return mongox.Page[GraphItem](ctx, s.Log(), threadList(threadID), before, limit)
}

// GraphEntry reads item seq of a thread's graph.
func (s *Store) GraphEntry(ctx context.Context, threadID string, seq int64) (mongox.Entry[GraphItem], error) {
	return mongox.Get[GraphItem](ctx, s.Log(), threadList(threadID), seq)
}

// GraphLen is how many items a thread's graph holds.
func (s *Store) GraphLen(ctx context.Context, threadID string) (int64, error) {
	return s.Log().Len(ctx, threadList(threadID))
}

// AppendMessage appends a message node to its thread's msgs list.
func (s *Store) AppendMessage(ctx context.Context, threadID string, m MessageRef) (int64, error) {
	return appendTo(ctx, s, msgsList(threadID), m)
}

// MessageCount is how many message nodes a thread's msgs list holds.
func (s *Store) MessageCount(ctx context.Context, threadID string) (int64, error) {
	return s.Log().Len(ctx, msgsList(threadID))
}

// MessageAt reads entry seq of a thread's msgs list.
func (s *Store) MessageAt(ctx context.Context, threadID string, seq int64) (MessageRef, error) {
	e, err := mongox.Get[MessageRef](ctx, s.Log(), msgsList(threadID), seq)
	return e.Value, err
}

// Reserve takes one of the max slots of a quota list: the list's positions are claimed by
// inserts, so concurrent writers never take more than max slots between them (no count then
// insert). A full list is refused with a read of its length only; a writer that loses the race
// for the last slot spends a position past max, which refuses it as well.
func (s *Store) Reserve(ctx context.Context, list string, max int64, key string) (bool, error) {
	if s.load != nil { // a preload writes what it was given, quota or not
		_, err := appendTo(ctx, s, list, key)
		return err == nil, err
	}
	n, err := s.Log().Len(ctx, list)
	if err != nil || n >= max {
		return false, err
	}
	seq, err := appendTo(ctx, s, list, key)
	if err != nil {
		return false, err
	}
	return seq <= max, nil
}

// QuotaUsed is how many slots of a quota list were taken (refused attempts past max included).
func (s *Store) QuotaUsed(ctx context.Context, list string) (int64, error) {
	return s.Log().Len(ctx, list)
}

// Invalidation reads the validity fact of a node (nil while it is valid): a point read.
func (s *Store) Invalidation(ctx context.Context, nodeID string) (*Invalidation, error) {
	var v Invalidation
	err := mongox.FindOne(ctx, s.c(Validity), mongox.ByID(nodeID), &v)
	if errors.Is(err, mongox.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// DueBucket names the time bucket of a due time: due times are grouped by width.
func DueBucket(at time.Time, width time.Duration) string {
	return "due:" + strconv.FormatInt(at.Truncate(width).Unix(), 10)
}

// DecisionRef names a decision recorded in one of an object's threads.
type DecisionRef struct {
	NodeID    string    `bson:"node_id"`
	ThreadID  string    `bson:"thread_id"`
	Title     string    `bson:"title"`
	CreatedAt time.Time `bson:"created_at"`
}

func decisionsList(objectID string) string { return "decisions:" + objectID }

// AppendDecision lists a decision among an object's decisions.
func (s *Store) AppendDecision(ctx context.Context, objectID string, d DecisionRef) error {
	_, err := appendTo(ctx, s, decisionsList(objectID), d)
	return err
}

// Decisions is how many decisions an object's threads recorded, and the latest (nil before the
// first).
func (s *Store) Decisions(ctx context.Context, objectID string) (int64, *DecisionRef, error) {
	l := s.Log()
	n, err := l.Len(ctx, decisionsList(objectID))
	if err != nil || n == 0 {
		return n, nil, err
	}
	e, err := mongox.Get[DecisionRef](ctx, l, decisionsList(objectID), n)
	if err != nil {
		return 0, nil, err
	}
	return n, &e.Value, nil
}
