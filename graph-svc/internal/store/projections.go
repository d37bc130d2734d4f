package store

import (
	"context"
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
//
// Then it makes sure the objects' hashes are copied beside the memory index (hashCopy): an
// object its insert found new gets the hash it inserted; for the others, one read of the
// projection, whose hash may be newer than the message's. One insert writes the copies where
// none is. Its caller calls it only for objects it has not recorded lately (graph.Service keeps
// an LRU of them), and a call retried after a failure writes the copy the failure left out.
func (s *Store) RememberHashes(ctx context.Context, hs []ObjectHash) error {
	inserted, err := mongox.InsertNew(ctx, s.c(Hashes), hs)
	if err != nil {
		return fmt.Errorf("store object hashes: %w", err)
	}
	var current, known []ObjectHash
	var ids []string
	for i, h := range hs {
		if inserted[i] {
			current = append(current, h)
		} else {
			ids = append(ids, h.ObjectID)
		}
	}
	if len(ids) > 0 {
		// Never the message's hash for an object already known: it may predate a change.
		if known, err = mongox.FindIn[ObjectHash](ctx, s.c(Hashes), ids); err != nil {
			return fmt.Errorf("store object hash copies: %w", err)
		}
	}
	if _, err := mongox.InsertNew(ctx, s.c(MemoryPostings), copiesOf(append(current, known...))); err != nil {
		return fmt.Errorf("store object hash copies: %w", err)
	}
	return nil
}

// SetHash records an object's new current hash, in the projection and its copy.
func (s *Store) SetHash(ctx context.Context, objectID, hash string) error {
	set := bson.D{{Key: "$set", Value: bson.D{{Key: "hash", Value: hash}}}}
	if err := mongox.Upsert(ctx, s.c(Hashes), objectID, set); err != nil {
		return fmt.Errorf("store object hashes: %w", err)
	}
	if err := mongox.Upsert(ctx, s.c(MemoryPostings), hashCopyID(objectID), set); err != nil {
		return fmt.Errorf("store object hash copies: %w", err)
	}
	return nil
}

// hashCopy is a copy of an object's current hash in the memory index's collection
// ("h|<object>"), so that a search reads its hits' cards and hashes in one find (Cards). It is
// written with the projection's own document (RememberHashes, SetHash), and once for the
// objects the projection held before copies existed (UpgradeHashCopies); until that has run, a
// search reads the projection itself for an object without a copy.
type hashCopy struct {
	ID   string `bson:"_id"`
	Hash string `bson:"hash"`
}

// hashCopyScope starts the _id of every hashCopy.
var hashCopyScope = mongox.Scope("h")

func hashCopyID(objectID string) string { return hashCopyScope + keyText(objectID) }

// copiesOf is the copies of hashes of the projection.
func copiesOf(hs []ObjectHash) []hashCopy {
	copies := make([]hashCopy, len(hs))
	for i, h := range hs {
		copies[i] = hashCopy{ID: hashCopyID(h.ObjectID), Hash: h.Hash}
	}
	return copies
}

// hashesCopied is the _id of the record that UpgradeHashCopies ran to its end.
var hashesCopied = mongox.Key("u", "hashes")

// UpgradeHashCopies copies the hashes the projection held before copies existed, once: a page
// of the projection at a time, each copy inserted only where none is (a copy written since by
// RememberHashes or SetHash is as new as the projection). A run cut short runs again from the
// start; a run that ends leaves a record the next ones stop at.
func (s *Store) UpgradeHashCopies(ctx context.Context) error {
	done, err := s.find(ctx, MemoryPostings, hashesCopied, &bson.Raw{})
	if err != nil {
		return fmt.Errorf("upgrade object hash copies: %w", err)
	}
	if !done {
		r := mongox.Range{Limit: upgradePage}
		id := func(h ObjectHash) string { return h.ObjectID }
		if err := mongox.Pages(ctx, s.c(Hashes), r, id, func(hs []ObjectHash) error {
			_, err := mongox.InsertNew(ctx, s.c(MemoryPostings), copiesOf(hs))
			return err
		}); err != nil {
			return fmt.Errorf("upgrade object hash copies: %w", err)
		}
		if err := mongox.InsertOnce(ctx, s.c(MemoryPostings), bson.D{{Key: "_id", Value: hashesCopied}}); err != nil {
			return err
		}
	}
	s.hashesCopied.Store(true)
	return nil
}

// Hash reads the known current hash of an object ("" when graph-svc has not seen it): a point
// read.
func (s *Store) Hash(ctx context.Context, objectID string) (string, error) {
	var h ObjectHash
	_, err := s.find(ctx, Hashes, objectID, &h)
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
	if _, err := s.find(ctx, Blocks, BlockID(blockerID, senderID), &b); err != nil {
		return false, fmt.Errorf("store sender blocks: %w", err)
	}
	return b.Blocked, nil
}

// Hashes reads the known current hashes of objects (those graph-svc has not seen are left out),
// in one find by _id (per mongox.MaxIDIn objects: a search's candidates may name more).
func (s *Store) Hashes(ctx context.Context, objectIDs []string) (map[string]string, error) {
	hs, err := mongox.FindIn[ObjectHash](ctx, s.c(Hashes), objectIDs) // no find for no ids
	if err != nil {
		return nil, fmt.Errorf("store object hashes: %w", err)
	}
	out := make(map[string]string, len(objectIDs))
	for _, h := range hs {
		out[h.ObjectID] = h.Hash
	}
	return out, nil
}
