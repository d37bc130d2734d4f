package store

import (
	"context"
	"time"
)

// SigningKey is one signing key of an object, stored as a fact (<object>/sigkey/<n>). The private
// half of a key svc holds is sealed under the operator's key (object.Sealer); a key the owner
// registered has none.
type SigningKey struct {
	KID    string `bson:"kid"`
	Public []byte `bson:"public"`
	// Sealed is the AES-GCM sealed Ed25519 seed, nil when the owner holds the private key.
	Sealed []byte `bson:"sealed,omitempty"`
	// CreatedAt and RotatedAt are folded from the facts.
	CreatedAt time.Time  `bson:"-"`
	RotatedAt *time.Time `bson:"-"`
}

// SigningKeyFactID is the id of the n-th signing key of an object: the sealing binds the sealed
// seed to it, so that it cannot be moved to another object.
func SigningKeyFactID(objectID string, n int) string { return factID(objectID, factSigKey, n) }

// AddSigningKey records key as the n-th signing key of the object, replacing key n-1. ErrTaken
// if another key took number n first (a concurrent rotation): the caller reads again.
func (s *Store) AddSigningKey(ctx context.Context, objectID string, n int, key SigningKey, at time.Time) error {
	return s.insert(ctx, Facts, fact{ID: SigningKeyFactID(objectID, n), ObjectID: objectID, Kind: factSigKey, Seq: n,
		SigKey: &key, At: at})
}
