package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// Decision is a decision recorded in one of an object's threads, learned from graph-svc. Decisions
// are kept in their object's list (lists.go); the decisions collection holds those an earlier
// release stored, which the backfill lists.
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

// RecordDecision lists a decision under its object once, keyed by its id: redelivered events
// change nothing. The entry is the decision itself, so a page of decisions is one point read each.
func (s *Store) RecordDecision(ctx context.Context, d *Decision) error {
	d.ID = d.ObjectID + ":" + d.NodeID
	if _, _, err := mongox.AppendOnce(ctx, s.objectLists, decisionList(d.ObjectID), d.ID, *d); err != nil {
		return fmt.Errorf("store decisions: %w", err)
	}
	return nil
}

// RecentDecisions returns the limit decisions of an object recorded last, newest first.
func (s *Store) RecentDecisions(ctx context.Context, objectID string, limit int) ([]Decision, error) {
	entries, _, err := mongox.Page[Decision](ctx, s.objectLists, decisionList(objectID), 0, limit)
	if err != nil {
		return nil, fmt.Errorf("store decisions: %w", err)
	}
	out := make([]Decision, len(entries))
	for i, e := range entries {
		out[i] = e.Value
	}
	// Newest first by when each was made: events may arrive out of that order (and the backfill
	// lists an earlier release's decisions after newer ones), which matters to which supersedes.
	slices.SortStableFunc(out, func(a, b Decision) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return out, nil
}
