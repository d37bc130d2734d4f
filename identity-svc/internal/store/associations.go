package store

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
)

// Association is a related object.
type Association struct {
	ID        string           `bson:"_id"`
	ObjectID  string           `bson:"object_id"`
	PeerHash  string           `bson:"peer_hash"`
	Role      string           `bson:"role"`
	Label     string           `bson:"label"`
	CreatedAt time.Time        `bson:"created_at"`
	Outbox    []events.Pending `bson:"_outbox,omitempty"`
}

// InsertAssociation stores an association.
func (s *Store) InsertAssociation(ctx context.Context, a *Association) error {
	return s.insert(ctx, Associations, a)
}

// Associations lists an object's associations, oldest first.
func (s *Store) Associations(ctx context.Context, objectID string) ([]Association, error) {
	var out []Association
	err := s.all(ctx, Associations, bson.D{{Key: "object_id", Value: objectID}}, &out,
		options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(1000))
	return out, err
}

// DeleteAssociation deletes an association of objectID; mongox.ErrNotFound if none.
func (s *Store) DeleteAssociation(ctx context.Context, objectID, id string) error {
	found, err := s.deleteOne(ctx, Associations, bson.D{{Key: "_id", Value: id}, {Key: "object_id", Value: objectID}})
	if err == nil && !found {
		return mongox.ErrNotFound
	}
	return err
}
