package store

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// Thread is a thread graph-svc keeps a graph for: a mailbox thread, whose two participants never
// change once it exists, or an owner's self-ingest thread (Self, one participant: OwnerID).
type Thread struct {
	ID           string    `bson:"_id"`
	Participants []string  `bson:"participants"`
	Self         bool      `bson:"self,omitempty"`
	OwnerID      string    `bson:"owner_id,omitempty"`
	CreatedAt    time.Time `bson:"created_at"`
}

// AddThread records a thread once; a thread already known is left as it is.
func (s *Store) AddThread(ctx context.Context, t *Thread) error { return s.insertOnce(ctx, Threads, t) }

// AddThreads records threads once each, in one command.
func (s *Store) AddThreads(ctx context.Context, ts []Thread) error {
	_, err := mongox.InsertNew(ctx, s.c(Threads), ts)
	return err
}

// Thread reads a thread; mongox.ErrNotFound if graph-svc does not know it.
func (s *Store) Thread(ctx context.Context, id string) (*Thread, error) {
	var t Thread
	if err := mongox.FindOne(ctx, s.c(Threads), mongox.ByID(id), &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// SelfThreads lists an owner's self-ingest threads, newest first.
func (s *Store) SelfThreads(ctx context.Context, ownerID string) ([]Thread, error) {
	return mongox.FindAll[Thread](ctx, s.c(Threads), bson.D{{Key: "owner_id", Value: ownerID}, {Key: "self", Value: true}},
		mopts.Find().SetSort(bson.D{{Key: "created_at", Value: -1}}))
}

// ThreadsOf lists the threads an object takes part in.
func (s *Store) ThreadsOf(ctx context.Context, objectID string) ([]Thread, error) {
	return mongox.FindAll[Thread](ctx, s.c(Threads), bson.D{{Key: "participants", Value: objectID}})
}
