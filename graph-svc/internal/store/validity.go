package store

import (
	"context"
	"time"
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
