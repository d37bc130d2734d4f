package store

import (
	"context"
	"fmt"
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
	return mongox.InsertOnce(ctx, s.c(Validity), v)
}

// Invalidations reads the validity facts of nodes (those still valid have none), in one find by
// _id. A page of a graph or of search hits asks for at most a few hundred.
func (s *Store) Invalidations(ctx context.Context, nodeIDs []string) (map[string]*Invalidation, error) {
	vs, err := mongox.FindIn[Invalidation](ctx, s.c(Validity), nodeIDs) // no find for no ids
	if err != nil {
		return nil, fmt.Errorf("store validity: %w", err)
	}
	out := make(map[string]*Invalidation, len(nodeIDs))
	for i := range vs {
		out[vs[i].NodeID] = &vs[i]
	}
	return out, nil
}
