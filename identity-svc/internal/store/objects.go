package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/mongox"
)

// Object is the stored object.
type Object struct {
	ID            string          `bson:"_id"`
	Hash          string          `bson:"hash"`
	Hashes        []string        `bson:"hashes"`
	Username      string          `bson:"username,omitempty"`
	MailboxStatus string          `bson:"mailbox_status"`
	Version       int             `bson:"version"`
	Title         string          `bson:"title"`
	InitialLLMTxt string          `bson:"initial_llm_txt"`
	Rules         *contract.Rules `bson:"rules"`
	SocialHandles []SocialHandle  `bson:"social_handles,omitempty"`
	CreatedAt     time.Time       `bson:"created_at"`
	UpdatedAt     time.Time       `bson:"updated_at"`
	// Visibility is set at creation and never changes; contract.Visible decides who sees it.
	Visibility contract.Visibility `bson:"visibility"`
	// Listed says the object was written by a release that lists public objects in the directory
	// as it creates them; the backfill lists those written before (backfill.go).
	Listed bool `bson:"listed,omitempty"`
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

// InsertObject stores a new object (its hash is claimed first by the caller). A public object
// is listed in the directory first: a listed object whose insert then fails is skipped by
// directory reads, while an object stored but not listed would never be found there.
// Visibility is set at creation and never changes, so the directory is append-only.
func (s *Store) InsertObject(ctx context.Context, o *Object) error {
	o.Listed = true
	if o.Visibility == contract.Public {
		if err := s.putEntry(ctx, directoryKey(o.ID), directoryEntry{ObjectID: o.ID}); err != nil {
			return fmt.Errorf("list in the directory: %w", err)
		}
	}
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
		return s.ObjectUncached(ctx, id)
	}
	o, err := s.cache.Get(ctx, id, func(ctx context.Context) (Object, error) {
		o, err := s.ObjectUncached(ctx, id)
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

// ObjectUncached reads an object's document past the cache and folds its facts into it.
func (s *Store) ObjectUncached(ctx context.Context, id string) (*Object, error) {
	var o Object
	if err := s.one(ctx, Objects, mongox.ByID(id), &o); err != nil {
		return nil, err
	}
	if err := s.fold(ctx, &o); err != nil {
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

// DirectoryQuery selects public objects, newest first.
type DirectoryQuery struct {
	Before string // the object id a previous page ended at ("": the newest)
	Limit  int
	Match  string // case-insensitive substring of hash or title
	Status string // mailbox status, or "" for any
}

// directoryEntry is an entry of the directory list: a public object.
type directoryEntry struct {
	ObjectID string `bson:"object_id"`
}

// directoryKey is the key of a public object in the directory.
func directoryKey(objectID string) string { return mongox.Key(directoryPart, mongox.IDPart(objectID)) }

// Directory lists public objects from the directory list, newest first, and the object id to page
// on from ("" on the last). Status and text are facts, not fields of the list, so each listed
// object is read (from the cache, else folded; a chunk's objects at once) and matched: a page
// reads at most pageBudget entries per entry asked for, so a search that matches little comes back
// short, with a cursor.
func (s *Store) Directory(ctx context.Context, q DirectoryQuery) ([]Object, string, error) {
	match := strings.ToLower(q.Match)
	matches := func(o *Object) bool {
		return o.Visibility == contract.Public && (q.Status == "" || o.MailboxStatus == q.Status) &&
			(match == "" || strings.Contains(strings.ToLower(o.Hash), match) || strings.Contains(strings.ToLower(o.Title), match))
	}
	return readPage(ctx, s, []string{directoryPart}, Page{Before: q.Before, Limit: q.Limit}, func(e directoryEntry) string { return e.ObjectID },
		judgeEach(func(ctx context.Context, e directoryEntry) (*Object, error) {
			o, err := s.Object(ctx, e.ObjectID)
			if errors.Is(err, mongox.ErrNotFound) {
				return nil, nil // listed, but its creation failed
			}
			if err != nil || !matches(o) {
				return nil, err
			}
			return o, nil
		}))
}
