package store

import (
	"context"
	"errors"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
)

// Key is a stored key: its digest is the document id; the key itself is never stored.
type Key struct {
	Digest    string    `bson:"_id"`
	KeyID     string    `bson:"key_id"`
	ObjectID  string    `bson:"object_id"`
	Owner     bool      `bson:"owner"`
	Label     string    `bson:"label"`
	Scopes    []string  `bson:"scopes"`
	Prefix    string    `bson:"prefix"`
	CreatedAt time.Time `bson:"created_at"`
	// Replaces is, for an owner key made by a rotation, the digest of the key it replaces: the
	// key is live only once that key's revocation names it as the successor.
	Replaces string   `bson:"replaces,omitempty"`
	Events   []string `bson:"_events,omitempty"`
	// Listed says the key was written by a release that records its key id (KeyIDs) and lists
	// sub-keys as it stores them; the backfill does both for keys written before (backfill.go).
	Listed bool `bson:"listed,omitempty"`
	// LastUsedAt is read from KeyUsage, never stored in the key document.
	LastUsedAt *time.Time `bson:"-"`
}

// Revocation records that a key was revoked or rotated away; its id is the key digest.
type Revocation struct {
	Digest    string    `bson:"_id"`
	KeyID     string    `bson:"key_id"`
	ObjectID  string    `bson:"object_id"`
	RevokedAt time.Time `bson:"revoked_at"`
	// Successor is the digest of the owner key a rotation made live.
	Successor string   `bson:"successor,omitempty"`
	Events    []string `bson:"_events,omitempty"`
}

// KeyIDs maps each key id to its key's digest, so that revoking or rotating a key by id is two
// point reads (a filter on key_id would be a scan of every key on FerretDB).
const KeyIDs = "key_ids"

// keyIDDoc is the document of KeyIDs.
type keyIDDoc struct {
	ID     string `bson:"_id"`
	Digest string `bson:"digest"`
}

// InsertKey stores a key by digest, after its key id record. A sub-key is then put into its
// object's keys list; if that fails, the key is removed again and the error returned, so that no
// stored key is missing from the list (the key was never handed out, and its staged event goes
// with its document). A key id record whose key was not stored names a digest that is not found.
func (s *Store) InsertKey(ctx context.Context, k *Key) error {
	k.Listed = true
	if err := s.insert(ctx, KeyIDs, keyIDDoc{ID: k.KeyID, Digest: k.Digest}); err != nil {
		return err
	}
	if err := s.insert(ctx, Keys, k); err != nil || k.Owner {
		return err
	}
	return s.listOrUndo(ctx, keyListKey(k), listedKey(k), Keys, k.Digest)
}

// keyListKey is the key of a sub-key in its object's keys list.
func keyListKey(k *Key) string { return mongox.Key(k.ObjectID, keysPart, mongox.IDPart(k.KeyID)) }

// keyEntry is an entry of an object's keys list: what the list shows of a sub-key, which never
// changes once stored.
type keyEntry struct {
	Digest    string    `bson:"digest"`
	KeyID     string    `bson:"key_id"`
	Label     string    `bson:"label"`
	Scopes    []string  `bson:"scopes"`
	Prefix    string    `bson:"prefix"`
	CreatedAt time.Time `bson:"created_at"`
}

func listedKey(k *Key) keyEntry {
	return keyEntry{Digest: k.Digest, KeyID: k.KeyID, Label: k.Label, Scopes: k.Scopes, Prefix: k.Prefix, CreatedAt: k.CreatedAt}
}

// KeyByDigest returns an active (not revoked) key; mongox.ErrNotFound if none. Its revocation,
// and for a rotated owner key its predecessor's, are point reads.
func (s *Store) KeyByDigest(ctx context.Context, digest string) (*Key, error) {
	var k Key
	if err := s.one(ctx, Keys, mongox.ByID(digest), &k); err != nil {
		return nil, err
	}
	digests := []string{digest}
	if k.Replaces != "" {
		digests = append(digests, k.Replaces)
	}
	revoked, err := s.revocations(ctx, digests...)
	if err != nil {
		return nil, err
	}
	if _, ok := revoked[digest]; ok {
		return nil, mongox.ErrNotFound
	}
	if r, ok := revoked[k.Replaces]; k.Replaces != "" && (!ok || r.Successor != digest) {
		return nil, mongox.ErrNotFound // a rotation that did not happen, or lost to another
	}
	return &k, nil
}

// revocations returns the revocations of those of the digests that have been revoked, read by
// _id one by one (a filter on several ids would be a scan on FerretDB).
func (s *Store) revocations(ctx context.Context, digests ...string) (map[string]Revocation, error) {
	out := make(map[string]Revocation, len(digests))
	for _, d := range digests {
		var r Revocation
		err := s.one(ctx, Revocations, mongox.ByID(d), &r, options.FindOne().SetProjection(bson.D{{Key: events.EventsField, Value: 0}}))
		switch {
		case err == nil:
			out[d] = r
		case !errors.Is(err, mongox.ErrNotFound):
			return nil, err
		}
	}
	return out, nil
}

// TouchKey records a use of the key.
func (s *Store) TouchKey(ctx context.Context, digest string, at time.Time) error {
	return mongox.Upsert(ctx, s.db.Collection(KeyUsage), digest, bson.D{{Key: "$set", Value: bson.D{{Key: "last_used_at", Value: at}}}})
}

// SubKeys lists a page of the active sub-keys of an object, newest first, with their last use,
// and the key id to page on from ("" on the last): one find of the list, then, per chunk of it,
// one find of the chunk's revocations and one of its last uses. Revoked keys are skipped within
// the page's budget.
func (s *Store) SubKeys(ctx context.Context, objectID string, p Page) ([]Key, string, error) {
	return readPage(ctx, s, []string{objectID, keysPart}, p, func(e keyEntry) string { return e.KeyID },
		func(ctx context.Context, chunk []keyEntry) ([]*Key, error) {
			return s.activeSubKeys(ctx, objectID, chunk)
		})
}

// activeSubKeys returns the listed sub-keys with their last use, nil for those revoked.
func (s *Store) activeSubKeys(ctx context.Context, objectID string, chunk []keyEntry) ([]*Key, error) {
	digests := make([]string, len(chunk))
	for i, e := range chunk {
		digests[i] = e.Digest
	}
	gone, err := existing(ctx, s, Revocations, chunk, func(e keyEntry) string { return e.Digest })
	if err != nil {
		return nil, err
	}
	var used []struct {
		Digest     string    `bson:"_id"`
		LastUsedAt time.Time `bson:"last_used_at"`
	}
	if err := s.all(ctx, KeyUsage, byIDs(digests), &used); err != nil {
		return nil, err
	}
	lastUse := make(map[string]time.Time, len(used))
	for _, u := range used {
		lastUse[u.Digest] = u.LastUsedAt
	}
	out := make([]*Key, len(chunk))
	for i, e := range chunk {
		if gone[e.Digest] {
			continue
		}
		k := &Key{Digest: e.Digest, KeyID: e.KeyID, ObjectID: objectID, Label: e.Label, Scopes: e.Scopes, Prefix: e.Prefix, CreatedAt: e.CreatedAt}
		if at, ok := lastUse[e.Digest]; ok {
			k.LastUsedAt = &at
		}
		out[i] = k
	}
	return out, nil
}

// RevokeKey revokes an active sub-key of objectID by key id and returns it; mongox.ErrNotFound if
// there is no such active key. The event travels in the revocation, which is inserted once: of
// two concurrent revocations only one succeeds (the loser's staged event is dropped).
func (s *Store) RevokeKey(ctx context.Context, objectID, keyID string, at time.Time, outbox events.Stager, ev events.Pending) (*Key, error) {
	k, err := s.activeKey(ctx, objectID, keyID, false)
	if err != nil {
		return nil, err
	}
	if err := outbox.Stage(ctx, Revocations, k.Digest, ev); err != nil {
		return nil, err
	}
	r := Revocation{Digest: k.Digest, KeyID: k.KeyID, ObjectID: objectID, RevokedAt: at, Events: events.IDs(ev)}
	if err := s.insert(ctx, Revocations, r); err != nil {
		if errors.Is(err, ErrTaken) {
			return nil, mongox.ErrNotFound
		}
		return nil, err
	}
	return k, nil
}

// activeKey returns the key of objectID with keyID, the owner key or a sub-key: its key id record,
// then the key. Keys stored by a release before the records have none until the backfill made
// them; until it has run, such a key is looked up by a filter.
func (s *Store) activeKey(ctx context.Context, objectID, keyID string, owner bool) (*Key, error) {
	var id keyIDDoc
	err := s.one(ctx, KeyIDs, mongox.ByID(keyID), &id)
	if errors.Is(err, mongox.ErrNotFound) && !s.backfilled.Load() {
		var k Key
		filter := bson.D{{Key: "key_id", Value: keyID}, {Key: "object_id", Value: objectID}, {Key: "owner", Value: owner}}
		if err := s.one(ctx, Keys, filter, &k); err != nil {
			return nil, err
		}
		return &k, nil
	}
	if err != nil {
		return nil, err
	}
	var k Key
	if err := s.one(ctx, Keys, mongox.ByID(id.Digest), &k); err != nil {
		return nil, err
	}
	if k.ObjectID != objectID || k.Owner != owner {
		return nil, mongox.ErrNotFound
	}
	return &k, nil
}

// Rotate replaces the owner key keyID of objectID by next and returns the old key. next is stored
// first but is live only once the old key's revocation names it (KeyByDigest); that revocation is
// one insert, carrying the event, so of concurrent rotations exactly one makes its key live and
// the others get ErrTaken, with keys that never verify. If the revocation cannot be stored, the
// rotation did not happen and the old key stays live. The event is recorded by the revocation.
func (s *Store) Rotate(ctx context.Context, objectID, keyID string, next *Key, at time.Time, outbox events.Stager, ev events.Pending) (*Key, error) {
	old, err := s.activeKey(ctx, objectID, keyID, true)
	if err != nil {
		return nil, err
	}
	if err := outbox.Stage(ctx, Revocations, old.Digest, ev); err != nil {
		return nil, err
	}
	next.Replaces = old.Digest
	if err := s.InsertKey(ctx, next); err != nil {
		return nil, err
	}
	r := Revocation{Digest: old.Digest, KeyID: old.KeyID, ObjectID: objectID, RevokedAt: at, Successor: next.Digest,
		Events: events.IDs(ev)}
	if err := s.insert(ctx, Revocations, r); err != nil {
		return nil, err
	}
	return old, nil
}

// DeleteKey removes a key that never became live (the loser of a concurrent rotation).
func (s *Store) DeleteKey(ctx context.Context, digest string) error {
	_, err := s.deleteOne(ctx, Keys, mongox.ByID(digest))
	return err
}
