package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// Decision is a decision recorded in one of an object's threads, learned from graph-svc.
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
}

// RecordDecision stores a decision once (redelivered events change nothing).
func (s *Store) RecordDecision(ctx context.Context, d *Decision) error {
	d.ID = d.ObjectID + ":" + d.NodeID
	if _, err := s.decisions.InsertOne(ctx, d); err != nil && !mongox.IsDuplicateKey(err) {
		return fmt.Errorf("store decisions: %w", err)
	}
	return nil
}

// RecentDecisions returns up to limit decisions of an object, newest first.
func (s *Store) RecentDecisions(ctx context.Context, objectID string, limit int) ([]Decision, error) {
	return mongox.FindAll[Decision](ctx, s.decisions, bson.D{{Key: "object_id", Value: objectID}},
		options.Find().SetSort(bson.D{{Key: "created_at", Value: -1}}).SetLimit(int64(limit)))
}
