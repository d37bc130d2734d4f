package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/mongox"
)

// ObjectHash is the current hash of an object graph-svc has seen, so that a graph read names
// authors by their hash now without asking another service. It is learned from the messages
// that name it and kept current by identity-svc's object.hash_changed events.
type ObjectHash struct {
	ObjectID string `bson:"_id"`
	Hash     string `bson:"hash"`
}

// RememberHashes records the hashes of objects seen for the first time, in one insert. It never
// overwrites: a change of hash is the consumer of identity-svc's events to record, so a message
// carrying the hash from before a change cannot undo it.
func (s *Store) RememberHashes(ctx context.Context, hs []ObjectHash) error {
	if _, err := mongox.InsertNew(ctx, s.c(Hashes), hs); err != nil {
		return fmt.Errorf("store object hashes: %w", err)
	}
	return nil
}

// SetHash records an object's new current hash.
func (s *Store) SetHash(ctx context.Context, objectID, hash string) error {
	err := mongox.Upsert(ctx, s.c(Hashes), objectID, bson.D{{Key: "$set", Value: bson.D{{Key: "hash", Value: hash}}}})
	if err != nil {
		return fmt.Errorf("store object hashes: %w", err)
	}
	return nil
}

// Hash reads the known current hash of an object ("" when graph-svc has not seen it): a point
// read.
func (s *Store) Hash(ctx context.Context, objectID string) (string, error) {
	var h ObjectHash
	err := mongox.FindOne(ctx, s.c(Hashes), mongox.ByID(objectID), &h)
	if errors.Is(err, mongox.ErrNotFound) {
		return "", nil
	}
	return h.Hash, err
}

// SenderBlock is whether an object (the blocker, the owner of a box) blocks a sender, as
// mailbox-svc's sender.blocked and sender.unblocked events last said. Its _id is
// BlockID(blocker, sender), so a write checks it with one point read.
type SenderBlock struct {
	ID      string    `bson:"_id"`
	Blocked bool      `bson:"blocked"`
	At      time.Time `bson:"at"`
}

// BlockID is the _id of the block of sender by blocker.
func BlockID(blockerID, senderID string) string { return blockerID + "/" + senderID }

// SetBlock records that blocker blocks (or no longer blocks) sender. The events of one blocker
// arrive in order, so the last one applied is the state.
func (s *Store) SetBlock(ctx context.Context, blockerID, senderID string, blocked bool, at time.Time) error {
	err := mongox.Upsert(ctx, s.c(Blocks), BlockID(blockerID, senderID),
		bson.D{{Key: "$set", Value: bson.D{{Key: "blocked", Value: blocked}, {Key: "at", Value: at}}}})
	if err != nil {
		return fmt.Errorf("store sender blocks: %w", err)
	}
	return nil
}

// Blocked reports whether blocker blocks sender.
func (s *Store) Blocked(ctx context.Context, blockerID, senderID string) (bool, error) {
	var b SenderBlock
	err := mongox.FindOne(ctx, s.c(Blocks), mongox.ByID(BlockID(blockerID, senderID)), &b)
	if errors.Is(err, mongox.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store sender blocks: %w", err)
	}
	return b.Blocked, nil
}

// Hashes reads the known current hashes of objects (those graph-svc has not seen are left out),
// in one find by _id (per mongox.MaxIDIn objects: a search's candidates may name more).
func (s *Store) Hashes(ctx context.Context, objectIDs []string) (map[string]string, error) {
	out := make(map[string]string, len(objectIDs))
	if len(objectIDs) == 0 {
		return out, nil
	}
	hs, err := mongox.FindIn[ObjectHash](ctx, s.c(Hashes), objectIDs)
	if err != nil {
		return nil, fmt.Errorf("store object hashes: %w", err)
	}
	for _, h := range hs {
		out[h.ObjectID] = h.Hash
	}
	return out, nil
}
