package store

import (
	"context"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// Invalidation is the fact that a node stopped being valid: a decision superseded it. Its _id is
// the node's, so a node is invalidated once, by the first decision that superseded it; later
// decisions add their supersedes edges only.
type Invalidation struct {
	NodeID    string    `bson:"_id"`
	ThreadID  string    `bson:"thread_id"`
	By        string    `bson:"by"`
	InvalidAt time.Time `bson:"invalid_at"`
}

// Invalidate records that a node stopped being valid, unless it already had.
func (s *Store) Invalidate(ctx context.Context, v *Invalidation) error {
	return s.insertOnce(ctx, Validity, v)
}

// InvalidationsOf returns the validity facts of a thread's nodes, by node id.
func (s *Store) InvalidationsOf(ctx context.Context, threadID string) (map[string]Invalidation, error) {
	all, err := mongox.FindAll[Invalidation](ctx, s.c(Validity), byThread(threadID))
	if err != nil {
		return nil, err
	}
	out := make(map[string]Invalidation, len(all))
	for _, v := range all {
		out[v.NodeID] = v
	}
	return out, nil
}
