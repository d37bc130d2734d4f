package store

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/mongox"
)

// ObjectHash is the current hash of an object this service has seen. Threads and messages name
// objects by id; their hashes are shown from here, kept current by identity-svc's
// object.hash_changed events.
type ObjectHash struct {
	ObjectID string `bson:"_id"`
	Hash     string `bson:"hash"`
}

// RememberHash records the hash of an object seen for the first time. It never overwrites: a
// change of hash is the event consumer's to record, so that a send holding a resolution from
// before the change cannot undo it. Since a stored record is never removed, an object this
// process has seen stored costs no store command.
func (s *Store) RememberHash(ctx context.Context, objectID, hash string) error {
	if s.remembered.Contains(objectID) {
		return nil
	}
	if _, err := insertOnce(ctx, s.hashes, ObjectHash{ObjectID: objectID, Hash: hash}); err != nil {
		return err
	}
	s.remembered.Add(objectID, struct{}{})
	return nil
}

// SetHash records an object's new current hash.
func (s *Store) SetHash(ctx context.Context, objectID, hash string) error {
	err := mongox.Upsert(ctx, s.hashes, objectID, bson.D{{Key: "$set", Value: bson.D{{Key: "hash", Value: hash}}}})
	if err != nil {
		return fmt.Errorf("store object hashes: %w", err)
	}
	return nil
}

// Hashes returns the known current hash of each of the objects, in one find by _id.
func (s *Store) Hashes(ctx context.Context, objectIDs []string) (map[string]string, error) {
	docs, err := mongox.FindIn[ObjectHash](ctx, s.hashes, objectIDs)
	if err != nil {
		return nil, fmt.Errorf("store object hashes: %w", err)
	}
	out := make(map[string]string, len(objectIDs))
	for _, d := range docs {
		out[d.ObjectID] = d.Hash
	}
	return out, nil
}
