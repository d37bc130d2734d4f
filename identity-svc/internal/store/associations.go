package store

import (
	"context"
	"errors"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
)

// Association is a related object.
type Association struct {
	ID        string    `bson:"_id"`
	ObjectID  string    `bson:"object_id"`
	PeerHash  string    `bson:"peer_hash"`
	Role      string    `bson:"role"`
	Label     string    `bson:"label"`
	CreatedAt time.Time `bson:"created_at"`
	Events    []string  `bson:"_events,omitempty"`
}

// InsertAssociation stores an association.
func (s *Store) InsertAssociation(ctx context.Context, a *Association) error {
	return s.insert(ctx, Associations, a)
}

// AssociationDeletions holds one document per deleted association. A deletion is an insert: the
// association document stays, so that an event still in its outbox is published, and of two
// concurrent deletions only one succeeds.
const AssociationDeletions = "association_deletions"

// Associations lists an object's associations that are not deleted, oldest first.
func (s *Store) Associations(ctx context.Context, objectID string) ([]Association, error) {
	var all []Association
	err := s.all(ctx, Associations, bson.D{{Key: "object_id", Value: objectID}}, &all,
		options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(1000).SetProjection(bson.D{{Key: events.EventsField, Value: 0}}))
	if err != nil || len(all) == 0 {
		return nil, err
	}
	ids := make([]string, len(all))
	for i, a := range all {
		ids[i] = a.ID
	}
	var deleted []struct {
		ID string `bson:"_id"`
	}
	if err := s.all(ctx, AssociationDeletions, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}, &deleted); err != nil {
		return nil, err
	}
	gone := make(map[string]bool, len(deleted))
	for _, d := range deleted {
		gone[d.ID] = true
	}
	return slices.DeleteFunc(all, func(a Association) bool { return gone[a.ID] }), nil
}

// DeleteAssociation deletes an association of objectID; mongox.ErrNotFound if there is none or
// it is already deleted.
func (s *Store) DeleteAssociation(ctx context.Context, objectID, id string, at time.Time) error {
	var a Association
	err := s.one(ctx, Associations, bson.D{{Key: "_id", Value: id}, {Key: "object_id", Value: objectID}}, &a,
		options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return err
	}
	err = s.insert(ctx, AssociationDeletions, bson.D{{Key: "_id", Value: id}, {Key: "object_id", Value: objectID}, {Key: "deleted_at", Value: at}})
	if errors.Is(err, ErrTaken) {
		return mongox.ErrNotFound
	}
	return err
}
