package store

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/mongox"
)

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

// InsertObject stores a new object (its hash is claimed first by the caller).
func (s *Store) InsertObject(ctx context.Context, o *Object) error {
	return s.insert(ctx, Objects, o)
}

// DeleteObject removes an object whose creation failed half-way.
func (s *Store) DeleteObject(ctx context.Context, id string) error {
	_, err := s.deleteOne(ctx, Objects, mongox.ByID(id))
	return err
}

// Object returns an object by id; mongox.ErrNotFound if none.
func (s *Store) Object(ctx context.Context, id string) (*Object, error) {
	var o Object
	if err := s.one(ctx, Objects, mongox.ByID(id), &o); err != nil {
		return nil, err
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

// update applies one update to object id.
func (s *Store) update(ctx context.Context, filter, update bson.D) error {
	if _, err := s.db.Collection(Objects).UpdateOne(ctx, filter, update); err != nil {
		return fmt.Errorf("store %s: %w", Objects, err)
	}
	return nil
}

// ChangeHash makes hash (already claimed) the object's current hash, keeping every previous one.
func (s *Store) ChangeHash(ctx context.Context, id, hash, username string, now time.Time) error {
	return s.update(ctx, mongox.ByID(id), bson.D{
		{Key: "$set", Value: bson.D{{Key: "hash", Value: hash}, {Key: "username", Value: username}, {Key: "updated_at", Value: now}}},
		{Key: "$push", Value: bson.D{{Key: "hashes", Value: hash}}},
	})
}

// UpdateProfile records the context version and title that context-svc reports. The version
// never goes backwards.
func (s *Store) UpdateProfile(ctx context.Context, id string, version int, title string, at time.Time) error {
	filter := bson.D{{Key: "_id", Value: id}, {Key: "version", Value: bson.D{{Key: "$lt", Value: version}}}}
	return s.update(ctx, filter, bson.D{{Key: "$set", Value: bson.D{
		{Key: "version", Value: version}, {Key: "title", Value: title}, {Key: "updated_at", Value: at},
	}}})
}

// SetMailboxStatus sets an object's mailbox status.
func (s *Store) SetMailboxStatus(ctx context.Context, id, status string, at time.Time) error {
	return s.update(ctx, mongox.ByID(id), bson.D{{Key: "$set", Value: bson.D{
		{Key: "mailbox_status", Value: status}, {Key: "updated_at", Value: at},
	}}})
}

// AddSocialHandle records a verified social claim (idempotent per claim id).
func (s *Store) AddSocialHandle(ctx context.Context, id string, h SocialHandle) error {
	filter := bson.D{{Key: "_id", Value: id}, {Key: "social_handles.claim_id", Value: bson.D{{Key: "$ne", Value: h.ClaimID}}}}
	return s.update(ctx, filter, bson.D{{Key: "$push", Value: bson.D{{Key: "social_handles", Value: h}}}})
}

// SetOwnerKey points the object at its new owner key.
func (s *Store) SetOwnerKey(ctx context.Context, objectID, keyID string, at time.Time) error {
	return s.update(ctx, mongox.ByID(objectID), bson.D{{Key: "$set", Value: bson.D{
		{Key: "owner_key_id", Value: keyID}, {Key: "updated_at", Value: at},
	}}})
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
	var out []Object
	err := s.all(ctx, Objects, filter, &out, opts)
	return out, err
}
