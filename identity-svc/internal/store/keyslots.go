package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/svcdev/svc/pkg/mongox"
)

// KeySlots bounds the active sub-keys of an object: each holds one of its object's numbered slots,
// `<object>|<slot>`. Taking a slot is an insert, so concurrent creates never pass the bound
// (FerretDB rewrites a document on update, so a counter's concurrent increments could be lost).
const KeySlots = "key_slots"

type keySlot struct {
	ID     string `bson:"_id"`
	Digest string `bson:"digest"`
}

// ErrNoKeySlot says that every sub-key slot of the object is held.
var ErrNoKeySlot = errors.New("store: every sub-key slot is held")

// TakeKeySlot gives the key with digest one of objectID's max slots. The object's slots are one
// _id range of at most max documents.
func (s *Store) TakeKeySlot(ctx context.Context, objectID, digest string, max int) error {
	coll := s.db.Collection(KeySlots)
	for range 4 { // a slot taken by a concurrent create between the read and the insert
		held, err := mongox.Find[keySlot](ctx, coll, mongox.Range{Scope: mongox.Scope(objectID), Limit: max})
		if err != nil {
			return err
		}
		taken := make(map[string]bool, len(held))
		for _, h := range held {
			if h.Digest == digest {
				return nil
			}
			taken[h.ID] = true
		}
		free := ""
		for n := range int64(max) {
			if id := mongox.Key(objectID, mongox.Seq(n)); !taken[id] {
				free = id
				break
			}
		}
		if free == "" {
			reclaimed, err := s.reclaimKeySlots(ctx, held)
			if err != nil || !reclaimed {
				return errors.Join(ErrNoKeySlot, err)
			}
			continue
		}
		err = mongox.Insert(ctx, coll, keySlot{ID: free, Digest: digest})
		if !errors.Is(err, mongox.ErrTaken) {
			return err
		}
	}
	return ErrNoKeySlot
}

// reclaimKeySlots deletes the slots of held whose keys were revoked (a revocation whose slot was
// not freed at the time), in two commands; it reports whether it freed any.
func (s *Store) reclaimKeySlots(ctx context.Context, held []keySlot) (bool, error) {
	gone, err := existing(ctx, s, Revocations, held, func(h keySlot) string { return h.Digest })
	if err != nil || len(gone) == 0 {
		return false, err
	}
	var ids []string
	for _, h := range held {
		if gone[h.Digest] {
			ids = append(ids, h.ID)
		}
	}
	if _, err := s.db.Collection(KeySlots).DeleteMany(ctx, byIDs(ids)); err != nil {
		return false, fmt.Errorf("store key slots: %w", err)
	}
	return true, nil
}

// FreeKeySlot gives back the slot of the key with digest, if it holds one.
func (s *Store) FreeKeySlot(ctx context.Context, objectID, digest string, max int) error {
	coll := s.db.Collection(KeySlots)
	held, err := mongox.Find[keySlot](ctx, coll, mongox.Range{Scope: mongox.Scope(objectID), Limit: max})
	if err != nil {
		return err
	}
	for _, h := range held {
		if h.Digest == digest {
			_, err := coll.DeleteOne(ctx, mongox.ByID(h.ID))
			return err
		}
	}
	return nil
}
