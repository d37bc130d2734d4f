package store

import (
	"context"
	"fmt"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// Decision is a decision recorded in one of an object's threads, learned from graph-svc. Decisions
// are kept in their object's range (lists.go); the decisions collection holds those an earlier
// release stored, which Upgrade carries over.
type Decision struct {
	ID         string     `bson:"_id"` // object_id:node_id
	ObjectID   string     `bson:"object_id"`
	ThreadID   string     `bson:"thread_id"`
	NodeID     string     `bson:"node_id"`
	Title      string     `bson:"title"`
	Body       string     `bson:"body"`
	Confidence *float64   `bson:"confidence"`
	Supersedes []string   `bson:"supersedes,omitempty"`
	CreatedAt  time.Time  `bson:"created_at"`
	ValidFrom  *time.Time `bson:"valid_from,omitempty"`
	ValidUntil *time.Time `bson:"valid_until,omitempty"`
	// AuthorHash is the hash its author recorded it under (empty for decisions learned from
	// events of earlier releases).
	AuthorHash string `bson:"author_hash,omitempty"`
}

// RecordDecision puts a decision into its object's range once, keyed by when it was made and its
// node: a redelivered event inserts nothing new. The entry is the decision itself.
func (s *Store) RecordDecision(ctx context.Context, d *Decision) error {
	d.ID = d.ObjectID + ":" + d.NodeID
	key := mongox.Key(d.ObjectID, decisionsPart, mongox.Time(d.CreatedAt), mongox.IDPart(d.NodeID))
	if err := s.insertEntry(ctx, key, *d); err != nil {
		return fmt.Errorf("store decisions: %w", err)
	}
	return nil
}

// RecentDecisions returns the limit decisions of an object made last, newest first: one find.
func (s *Store) RecentDecisions(ctx context.Context, objectID string, limit int) ([]Decision, error) {
	out, err := page[Decision](ctx, s, mongox.Range{Scope: mongox.Scope(objectID, decisionsPart), Desc: true, Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("store decisions: %w", err)
	}
	return out, nil
}
