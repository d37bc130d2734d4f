package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/mongox"
)

// Object is an object of the network as identity-svc's events describe it: its visibility (set
// at creation, never changed), its title at creation and its current hash. Only identity-svc's
// topic writes it, and one object's events come in order on one partition.
type Object struct {
	ID         string              `bson:"_id"`
	Hash       string              `bson:"hash"`
	Visibility contract.Visibility `bson:"visibility"`
	Title      string              `bson:"title"`
	CreatedAt  time.Time           `bson:"created_at"`
	// HashAt is when the current hash was taken, so that a replayed older change never wins.
	HashAt time.Time `bson:"hash_at"`
}

// Private reports whether the object appears in no public read.
func (o *Object) Private() bool { return !contract.Visible(o.Visibility, o.ID, "") }

// Title is an object's profile title as context-svc's events last reported it.
type Title struct {
	ObjectID string `bson:"_id"`
	Title    string `bson:"title"`
	Version  int    `bson:"version"`
}

// AddObjects stores created objects once each (those stored already are left as they are).
func (s *Store) AddObjects(ctx context.Context, objs ...Object) error {
	if _, err := mongox.InsertNewInBatches(ctx, s.c(Objects), objs, batch); err != nil {
		return fmt.Errorf("store objects: %w", err)
	}
	return nil
}

// SetHash records an object's new hash, unless a later one is already recorded. An object the
// projection does not know yet is left alone: its creation (earlier on the same partition)
// records its hash as it was then.
func (s *Store) SetHash(ctx context.Context, objectID, hash string, at time.Time) error {
	_, err := s.c(Objects).UpdateOne(ctx,
		bson.D{{Key: "_id", Value: objectID}, {Key: "hash_at", Value: bson.D{{Key: "$lte", Value: at}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "hash", Value: hash}, {Key: "hash_at", Value: at}}}})
	if err != nil {
		return fmt.Errorf("store objects: %w", err)
	}
	return nil
}

// Object returns one object (a point read), or mongox.ErrNotFound.
func (s *Store) Object(ctx context.Context, objectID string) (*Object, error) {
	var o Object
	if err := mongox.FindOne(ctx, s.c(Objects), mongox.ByID(objectID), &o); err != nil {
		return nil, fmt.Errorf("store objects: %w", err)
	}
	return &o, nil
}

// ObjectsOf returns the objects of the given ids that the projection knows, in one find by _id
// ($in): a page names a bounded number of objects.
func (s *Store) ObjectsOf(ctx context.Context, ids []string) (map[string]*Object, error) {
	ask := slices.DeleteFunc(slices.Compact(slices.Sorted(slices.Values(ids))), func(id string) bool { return id == "" })
	found, err := mongox.FindIn[Object](ctx, s.c(Objects), ask)
	if err != nil {
		return nil, fmt.Errorf("store objects: %w", err)
	}
	out := make(map[string]*Object, len(found))
	for i := range found {
		out[found[i].ID] = &found[i]
	}
	return out, nil
}

// SetTitle records an object's profile title at a context version, unless a later version is
// recorded already.
func (s *Store) SetTitle(ctx context.Context, t Title) error {
	var cur Title
	found, err := s.find(ctx, Titles, t.ObjectID, &cur)
	if err != nil {
		return fmt.Errorf("store titles: %w", err)
	}
	if found && cur.Version > t.Version {
		return nil
	}
	if err := mongox.ReplaceUpsert(ctx, s.c(Titles), t.ObjectID, t); err != nil {
		return fmt.Errorf("store titles: %w", err)
	}
	return nil
}

// Name is how an object is named as an author: its latest profile title, else its title at
// creation, else its hash.
func (s *Store) Name(ctx context.Context, o *Object) (string, error) {
	var t Title
	if _, err := s.find(ctx, Titles, o.ID, &t); err != nil {
		return "", fmt.Errorf("store titles: %w", err)
	}
	switch {
	case t.Title != "":
		return t.Title, nil
	case o.Title != "":
		return o.Title, nil
	}
	return o.Hash, nil
}
