package store

import (
	"context"
	"strings"
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
	SocialHandles []SocialHandle  `bson:"social_handles,omitempty"`
	CreatedAt     time.Time       `bson:"created_at"`
	UpdatedAt     time.Time       `bson:"updated_at"`
	// SigningKeys are the object's signing keys, oldest first, folded from its facts; the last is
	// the active one.
	SigningKeys []SigningKey `bson:"-"`
	// HashSeq counts the hash changes folded in: the next change is number HashSeq+1.
	HashSeq int `bson:"-"`
	// lapses says a claim of the object lapsed: without a live claim, the mailbox is unclaimed.
	lapses bool
}

// Mailbox statuses of the spec.
const (
	StatusUnclaimed = "unclaimed"
	StatusClaimed   = "claimed"
)

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
	if s.cache != nil {
		s.cache.Forget(id)
	}
	return err
}

// Object returns an object by id, with its facts; mongox.ErrNotFound if none.
func (s *Store) Object(ctx context.Context, id string) (*Object, error) {
	if s.cache == nil {
		return s.readObject(ctx, id)
	}
	o, err := s.cache.Get(ctx, id, func(ctx context.Context) (Object, error) {
		o, err := s.readObject(ctx, id)
		if err != nil {
			return Object{}, err
		}
		return *o, nil
	})
	if err != nil {
		return nil, err
	}
	return clone(o), nil
}

// ObjectUncached reads an object's document and facts past the cache.
func (s *Store) ObjectUncached(ctx context.Context, id string) (*Object, error) {
	return s.readObject(ctx, id)
}

// readObject reads an object's document and folds its facts into it.
func (s *Store) readObject(ctx context.Context, id string) (*Object, error) {
	objs := make([]Object, 1)
	if err := s.one(ctx, Objects, mongox.ByID(id), &objs[0]); err != nil {
		return nil, err
	}
	if err := s.fold(ctx, objs); err != nil {
		return nil, err
	}
	return &objs[0], nil
}

// ObjectByHash resolves a current or previous hash to its object.
func (s *Store) ObjectByHash(ctx context.Context, hash string) (*Object, error) {
	id, err := s.HashOwner(ctx, hash)
	if err != nil {
		return nil, err
	}
	return s.Object(ctx, id)
}

// DirectoryQuery selects public objects, newest first.
type DirectoryQuery struct {
	Before string // object id cursor: only objects created before it
	Limit  int
	Match  string // case-insensitive substring of hash or title
	Status string // mailbox status, or "" for any
}

// directoryBatch is how many public objects a directory read folds at a time.
const directoryBatch = 100

// Directory lists public objects. Status and text are facts, not fields of the object document,
// so they are matched after folding, batch by batch, until the page is full.
func (s *Store) Directory(ctx context.Context, q DirectoryQuery) ([]Object, error) {
	match := strings.ToLower(q.Match)
	before := q.Before
	var out []Object
	for len(out) < q.Limit {
		filter := bson.D{{Key: "visibility", Value: "public"}}
		if before != "" {
			filter = append(filter, bson.E{Key: "_id", Value: bson.D{{Key: "$lt", Value: before}}})
		}
		opts := options.Find().SetSort(bson.D{{Key: "_id", Value: -1}}).SetLimit(directoryBatch).
			SetProjection(bson.D{{Key: "initial_llm_txt", Value: 0}})
		var batch []Object
		if err := s.all(ctx, Objects, filter, &batch, opts); err != nil {
			return nil, err
		}
		if err := s.fold(ctx, batch); err != nil {
			return nil, err
		}
		for _, o := range batch {
			if q.Status != "" && o.MailboxStatus != q.Status {
				continue
			}
			if match != "" && !strings.Contains(strings.ToLower(o.Hash), match) && !strings.Contains(strings.ToLower(o.Title), match) {
				continue
			}
			if out = append(out, o); len(out) == q.Limit {
				break
			}
		}
		if len(batch) < directoryBatch {
			break
		}
		before = batch[len(batch)-1].ID
	}
	return out, nil
}
