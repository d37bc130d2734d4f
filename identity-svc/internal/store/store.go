// Package store is identity-svc's MongoDB repository: objects, their hashes (current and
// previous), keys (by SHA-256 digest only), associations and used payment vouchers.
package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
)

// Collection names.
const (
	Objects      = "objects"
	Hashes       = "hashes"
	Keys         = "keys"
	Associations = "associations"
	Vouchers     = "vouchers"
	// Revocations and KeyUsage are kept apart from the key documents: a revocation is an insert,
	// which no concurrent writer can undo (FerretDB applies an update as a whole-document
	// rewrite, so two updates of one key document could lose one), and usage, written on every
	// verification, never rewrites a key document.
	Revocations = "revocations"
	KeyUsage    = "key_usage"
)

// Errors the handlers map to HTTP answers.
var (
	ErrNotFound = errors.New("not found")
	ErrTaken    = errors.New("already taken")
)

// Indexes are the indexes real MongoDB needs for the queries below.
var Indexes = []mongox.Index{
	{Collection: Objects, Keys: bson.D{{Key: "visibility", Value: 1}, {Key: "_id", Value: -1}}},
	{Collection: Hashes, Keys: bson.D{{Key: "object_id", Value: 1}}},
	{Collection: Keys, Keys: bson.D{{Key: "key_id", Value: 1}}, Unique: true},
	{Collection: Keys, Keys: bson.D{{Key: "object_id", Value: 1}, {Key: "key_id", Value: 1}}},
	{Collection: Associations, Keys: bson.D{{Key: "object_id", Value: 1}, {Key: "_id", Value: 1}}},
}

// Object is the stored object.
type Object struct {
	ID            string          `bson:"_id"`
	Hash          string          `bson:"hash"`
	Hashes        []string        `bson:"hashes"`
	Username      string          `bson:"username,omitempty"`
	Visibility    string          `bson:"visibility"`
	MailboxStatus string          `bson:"mailbox_status"`
	Version       int             `bson:"version"`
	Title         string          `bson:"title"`
	InitialLLMTxt string          `bson:"initial_llm_txt"`
	Rules         *contract.Rules `bson:"rules"`
	OwnerKeyID    string          `bson:"owner_key_id"`
	SocialHandles []SocialHandle  `bson:"social_handles,omitempty"`
	CreatedAt     time.Time       `bson:"created_at"`
	UpdatedAt     time.Time       `bson:"updated_at"`
}

// SocialHandle is a verified claim of a social profile, learned from claims-svc's events.
type SocialHandle struct {
	Network string `bson:"network"`
	Handle  string `bson:"handle"`
	ClaimID string `bson:"claim_id"`
}

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
	Events    []string  `bson:"_events,omitempty"`
	// LastUsedAt is read from KeyUsage, never stored in the key document.
	LastUsedAt *time.Time `bson:"-"`
}

// Revocation records that a key was revoked or rotated away; its id is the key digest.
type Revocation struct {
	Digest    string    `bson:"_id"`
	KeyID     string    `bson:"key_id"`
	ObjectID  string    `bson:"object_id"`
	RevokedAt time.Time `bson:"revoked_at"`
	Events    []string  `bson:"_events,omitempty"`
}

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

// Store is the repository.
type Store struct{ db *mongo.Database }

// New returns a store over db.
func New(db *mongo.Database) *Store { return &Store{db: db} }

func (s *Store) c(name string) *mongo.Collection { return s.db.Collection(name) }

func byID(id any) bson.D { return bson.D{{Key: "_id", Value: id}} }

// ClaimHash reserves hash for objectID, recording the staged events of the change; ErrTaken if
// another object holds it.
func (s *Store) ClaimHash(ctx context.Context, hash, objectID string, evs ...events.Pending) error {
	doc := bson.D{{Key: "_id", Value: hash}, {Key: "object_id", Value: objectID}}
	if len(evs) > 0 {
		doc = append(doc, bson.E{Key: events.EventsField, Value: events.IDs(evs...)})
	}
	_, err := s.c(Hashes).InsertOne(ctx, doc)
	if mongox.IsDuplicateKey(err) {
		return ErrTaken
	}
	if err != nil {
		return fmt.Errorf("store hashes: %w", err)
	}
	return nil
}

// ReleaseHash undoes ClaimHash when the step after it failed.
func (s *Store) ReleaseHash(ctx context.Context, hash, objectID string) {
	_, _ = s.c(Hashes).DeleteOne(ctx, bson.D{{Key: "_id", Value: hash}, {Key: "object_id", Value: objectID}})
}

// HashOwner returns the object id a hash resolves to.
func (s *Store) HashOwner(ctx context.Context, hash string) (string, error) {
	var doc struct {
		ObjectID string `bson:"object_id"`
	}
	err := s.c(Hashes).FindOne(ctx, byID(hash)).Decode(&doc)
	if mongox.IsNotFound(err) {
		return "", ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("store hashes: %w", err)
	}
	return doc.ObjectID, nil
}

// InsertObject stores a new object (its owner key and hash are stored first by the caller).
func (s *Store) InsertObject(ctx context.Context, o *Object) error {
	if _, err := s.c(Objects).InsertOne(ctx, o); err != nil {
		return fmt.Errorf("store objects: %w", err)
	}
	return nil
}

// DeleteObject removes an object whose creation failed half-way.
func (s *Store) DeleteObject(ctx context.Context, id string) {
	_, _ = s.c(Objects).DeleteOne(ctx, byID(id))
}

// Object returns an object by id.
func (s *Store) Object(ctx context.Context, id string) (*Object, error) {
	var o Object
	err := s.c(Objects).FindOne(ctx, byID(id)).Decode(&o)
	if mongox.IsNotFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store objects: %w", err)
	}
	return &o, nil
}

// ObjectByHash resolves a current or previous hash to its object.
func (s *Store) ObjectByHash(ctx context.Context, hash string) (*Object, error) {
	id, err := s.HashOwner(ctx, hash)
	if err != nil {
		return nil, err
	}
	return s.Object(ctx, id)
}

// ChangeHash makes hash (already claimed) the object's current hash, keeping every previous one.
func (s *Store) ChangeHash(ctx context.Context, id, hash, username string, now time.Time) error {
	_, err := s.c(Objects).UpdateOne(ctx, byID(id), bson.D{
		{Key: "$set", Value: bson.D{{Key: "hash", Value: hash}, {Key: "username", Value: username}, {Key: "updated_at", Value: now}}},
		{Key: "$push", Value: bson.D{{Key: "hashes", Value: hash}}},
	})
	if err != nil {
		return fmt.Errorf("store objects: %w", err)
	}
	return nil
}

// UpdateProfile records the context version and title that context-svc reports. The version
// never goes backwards.
func (s *Store) UpdateProfile(ctx context.Context, id string, version int, title string, at time.Time) error {
	filter := bson.D{{Key: "_id", Value: id}, {Key: "version", Value: bson.D{{Key: "$lt", Value: version}}}}
	_, err := s.c(Objects).UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: bson.D{
		{Key: "version", Value: version}, {Key: "title", Value: title}, {Key: "updated_at", Value: at},
	}}})
	if err != nil {
		return fmt.Errorf("store objects: %w", err)
	}
	return nil
}

// SetMailboxStatus sets an object's mailbox status.
func (s *Store) SetMailboxStatus(ctx context.Context, id, status string, at time.Time) error {
	_, err := s.c(Objects).UpdateOne(ctx, byID(id), bson.D{{Key: "$set", Value: bson.D{
		{Key: "mailbox_status", Value: status}, {Key: "updated_at", Value: at},
	}}})
	if err != nil {
		return fmt.Errorf("store objects: %w", err)
	}
	return nil
}

// AddSocialHandle records a verified social claim (idempotent per claim id).
func (s *Store) AddSocialHandle(ctx context.Context, id string, h SocialHandle) error {
	filter := bson.D{{Key: "_id", Value: id}, {Key: "social_handles.claim_id", Value: bson.D{{Key: "$ne", Value: h.ClaimID}}}}
	_, err := s.c(Objects).UpdateOne(ctx, filter, bson.D{{Key: "$push", Value: bson.D{{Key: "social_handles", Value: h}}}})
	if err != nil {
		return fmt.Errorf("store objects: %w", err)
	}
	return nil
}

// DirectoryQuery selects public objects, newest first.
type DirectoryQuery struct {
	Before string // object id cursor: only objects created before it
	Limit  int
	Match  string // case-insensitive substring of hash or title
	Status string // mailbox status, or "" for any
}

// Directory lists public objects.
func (s *Store) Directory(ctx context.Context, q DirectoryQuery) ([]Object, error) {
	filter := bson.D{{Key: "visibility", Value: "public"}}
	if q.Before != "" {
		filter = append(filter, bson.E{Key: "_id", Value: bson.D{{Key: "$lt", Value: q.Before}}})
	}
	if q.Status != "" {
		filter = append(filter, bson.E{Key: "mailbox_status", Value: q.Status})
	}
	if q.Match != "" {
		re := bson.Regex{Pattern: regexp.QuoteMeta(q.Match), Options: "i"}
		filter = append(filter, bson.E{Key: "$or", Value: bson.A{
			bson.D{{Key: "hash", Value: re}}, bson.D{{Key: "title", Value: re}},
		}})
	}
	opts := options.Find().SetSort(bson.D{{Key: "_id", Value: -1}}).SetLimit(int64(q.Limit)).
		SetProjection(bson.D{{Key: "initial_llm_txt", Value: 0}})
	cur, err := s.c(Objects).Find(ctx, filter, opts)
	if err != nil {
		return nil, fmt.Errorf("store directory: %w", err)
	}
	var out []Object
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("store directory: %w", err)
	}
	return out, nil
}

// InsertKey stores a key by digest.
func (s *Store) InsertKey(ctx context.Context, k *Key) error {
	if _, err := s.c(Keys).InsertOne(ctx, k); err != nil {
		return fmt.Errorf("store keys: %w", err)
	}
	return nil
}

// KeyByDigest returns an active (not revoked) key.
func (s *Store) KeyByDigest(ctx context.Context, digest string) (*Key, error) {
	var k Key
	err := s.c(Keys).FindOne(ctx, byID(digest)).Decode(&k)
	if mongox.IsNotFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store keys: %w", err)
	}
	revoked, err := s.revoked(ctx, digest)
	if err != nil {
		return nil, err
	}
	if revoked[digest] {
		return nil, ErrNotFound
	}
	return &k, nil
}

// revoked returns which of the digests have been revoked.
func (s *Store) revoked(ctx context.Context, digests ...string) (map[string]bool, error) {
	cur, err := s.c(Revocations).Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: digests}}}},
		options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("store revocations: %w", err)
	}
	var docs []struct {
		Digest string `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("store revocations: %w", err)
	}
	out := make(map[string]bool, len(docs))
	for _, d := range docs {
		out[d.Digest] = true
	}
	return out, nil
}

// TouchKey records a use of the key.
func (s *Store) TouchKey(ctx context.Context, digest string, at time.Time) {
	_, _ = s.c(KeyUsage).UpdateOne(ctx, byID(digest), bson.D{{Key: "$set", Value: bson.D{{Key: "last_used_at", Value: at}}}},
		options.UpdateOne().SetUpsert(true))
}

// SubKeys lists the active sub-keys of an object, oldest first, with their last use.
func (s *Store) SubKeys(ctx context.Context, objectID string) ([]Key, error) {
	filter := bson.D{{Key: "object_id", Value: objectID}, {Key: "owner", Value: false}}
	cur, err := s.c(Keys).Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "key_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("store keys: %w", err)
	}
	var all []Key
	if err := cur.All(ctx, &all); err != nil {
		return nil, fmt.Errorf("store keys: %w", err)
	}
	digests := make([]string, len(all))
	for i, k := range all {
		digests[i] = k.Digest
	}
	revoked, err := s.revoked(ctx, digests...)
	if err != nil {
		return nil, err
	}
	used, err := s.lastUses(ctx, digests)
	if err != nil {
		return nil, err
	}
	var out []Key
	for _, k := range all {
		if !revoked[k.Digest] {
			k.LastUsedAt = used[k.Digest]
			out = append(out, k)
		}
	}
	return out, nil
}

func (s *Store) lastUses(ctx context.Context, digests []string) (map[string]*time.Time, error) {
	cur, err := s.c(KeyUsage).Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: digests}}}})
	if err != nil {
		return nil, fmt.Errorf("store key usage: %w", err)
	}
	var docs []struct {
		Digest     string    `bson:"_id"`
		LastUsedAt time.Time `bson:"last_used_at"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("store key usage: %w", err)
	}
	out := make(map[string]*time.Time, len(docs))
	for _, d := range docs {
		out[d.Digest] = &d.LastUsedAt
	}
	return out, nil
}

// RevokeKey revokes an active key of objectID by key id and returns it; ErrNotFound if there is
// no such active key. ownerKey selects the owner key or a sub-key. The event is staged in outbox
// and recorded by the revocation, which is inserted once: of two concurrent revocations only one
// succeeds.
func (s *Store) RevokeKey(ctx context.Context, objectID, keyID string, ownerKey bool, at time.Time, outbox events.Stager, ev events.Pending) (*Key, error) {
	filter := bson.D{{Key: "key_id", Value: keyID}, {Key: "object_id", Value: objectID}, {Key: "owner", Value: ownerKey}}
	var k Key
	err := s.c(Keys).FindOne(ctx, filter).Decode(&k)
	if mongox.IsNotFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store keys: %w", err)
	}
	if err := outbox.Stage(ctx, Revocations, k.Digest, ev); err != nil {
		return nil, err
	}
	r := Revocation{Digest: k.Digest, KeyID: k.KeyID, ObjectID: objectID, RevokedAt: at, Events: events.IDs(ev)}
	if _, err := s.c(Revocations).InsertOne(ctx, r); err != nil {
		if mongox.IsDuplicateKey(err) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("store revocations: %w", err)
	}
	return &k, nil
}

// SetOwnerKey points the object at its new owner key.
func (s *Store) SetOwnerKey(ctx context.Context, objectID, keyID string, at time.Time) error {
	_, err := s.c(Objects).UpdateOne(ctx, byID(objectID), bson.D{{Key: "$set", Value: bson.D{
		{Key: "owner_key_id", Value: keyID}, {Key: "updated_at", Value: at},
	}}})
	if err != nil {
		return fmt.Errorf("store objects: %w", err)
	}
	return nil
}

// InsertAssociation stores an association.
func (s *Store) InsertAssociation(ctx context.Context, a *Association) error {
	if _, err := s.c(Associations).InsertOne(ctx, a); err != nil {
		return fmt.Errorf("store associations: %w", err)
	}
	return nil
}

// Associations lists an object's associations, oldest first.
func (s *Store) Associations(ctx context.Context, objectID string) ([]Association, error) {
	cur, err := s.c(Associations).Find(ctx, bson.D{{Key: "object_id", Value: objectID}},
		options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(1000))
	if err != nil {
		return nil, fmt.Errorf("store associations: %w", err)
	}
	var out []Association
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("store associations: %w", err)
	}
	return out, nil
}

// DeleteAssociation deletes an association of objectID; ErrNotFound if none.
func (s *Store) DeleteAssociation(ctx context.Context, objectID, id string) error {
	res, err := s.c(Associations).DeleteOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "object_id", Value: objectID}})
	if err != nil {
		return fmt.Errorf("store associations: %w", err)
	}
	if res.DeletedCount == 0 {
		return ErrNotFound
	}
	return nil
}

// ReleaseVoucher undoes UseVoucher when the claim it paid for failed.
func (s *Store) ReleaseVoucher(ctx context.Context, voucherID, objectID string) {
	_, _ = s.c(Vouchers).DeleteOne(ctx, bson.D{{Key: "_id", Value: voucherID}, {Key: "object_id", Value: objectID}})
}

// UseVoucher records a payment voucher as spent; ErrTaken if it already was.
func (s *Store) UseVoucher(ctx context.Context, voucherID, objectID string, at time.Time) error {
	_, err := s.c(Vouchers).InsertOne(ctx, bson.D{{Key: "_id", Value: voucherID}, {Key: "object_id", Value: objectID}, {Key: "used_at", Value: at}})
	if mongox.IsDuplicateKey(err) {
		return ErrTaken
	}
	if err != nil {
		return fmt.Errorf("store vouchers: %w", err)
	}
	return nil
}
