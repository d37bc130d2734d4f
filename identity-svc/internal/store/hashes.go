package store

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/mongox"
)

// ClaimHash reserves hash for objectID; ErrTaken if another object holds it. A hash becomes
// the object's current one by the hash-change fact (ChangeHash).
func (s *Store) ClaimHash(ctx context.Context, hash, objectID string) error {
	return s.insert(ctx, Hashes, bson.D{{Key: "_id", Value: hash}, {Key: "object_id", Value: objectID}})
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
