package store

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
)

// ClaimHash reserves hash for objectID, with the events of the change; ErrTaken if another
// object holds it. Hash documents are never updated, so their outbox is safe from concurrent
// rewrites.
func (s *Store) ClaimHash(ctx context.Context, hash, objectID string, evs ...events.Pending) error {
	doc := bson.D{{Key: "_id", Value: hash}, {Key: "object_id", Value: objectID}}
	if len(evs) > 0 {
		doc = append(doc, bson.E{Key: events.OutboxField, Value: evs})
	}
	return s.insert(ctx, Hashes, doc)
}

// ReleaseHash undoes ClaimHash when the step after it failed.
func (s *Store) ReleaseHash(ctx context.Context, hash, objectID string) error {
	_, err := s.deleteOne(ctx, Hashes, bson.D{{Key: "_id", Value: hash}, {Key: "object_id", Value: objectID}})
	return err
}

// HashOwner returns the object id a hash resolves to; mongox.ErrNotFound if none.
func (s *Store) HashOwner(ctx context.Context, hash string) (string, error) {
	var doc struct {
		ObjectID string `bson:"object_id"`
	}
	if err := s.one(ctx, Hashes, mongox.ByID(hash), &doc); err != nil {
		return "", err
	}
	return doc.ObjectID, nil
}
