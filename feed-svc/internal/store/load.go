package store

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// load is what a store made by NewLoad stages for its Flush instead of writing it: list appends
// (a mongox.LogLoad), new objects and items, and the latest rows of boxes. Objects created or
// read during the load are kept until the Flush, so that the consumer's reads of them cost
// nothing.
type load struct {
	lists   *mongox.LogLoad
	objects map[string]*Object
	created []Object
	items   []Item
	latest  map[string]int64
}

// NewLoad returns a store over db that writes in bulk, for a preload while no consumer writes the
// same lists (a benchmark's store at a given size): the consumer's code run over it stages the
// documents it would write, and Flush writes them with insertMany batches, so the store holds
// what the consumer would have written. Not safe for concurrent use.
func NewLoad(db *mongo.Database) *Store {
	s := New(db)
	s.load = &load{lists: s.lists.Load(), objects: map[string]*Object{}, latest: map[string]int64{}}
	return s
}

// Fresh declares keys (ids of events never projected, of items never listed) whose first
// append to a list stages without reading a marker: see mongox.LogLoad.Fresh.
func (s *Store) Fresh(keys ...string) {
	if s.load != nil {
		s.load.lists.Fresh(keys...)
	}
}

// Staged is how many documents a load store holds for its next Flush.
func (s *Store) Staged() int {
	if s.load == nil {
		return 0
	}
	return s.load.lists.Staged() + len(s.load.created) + len(s.load.items) + len(s.load.latest)
}

// PreloadItem stores an item's record as publishing does (staged by a load store).
func (s *Store) PreloadItem(ctx context.Context, it Item) error {
	if s.load != nil {
		s.load.items = append(s.load.items, it)
		return nil
	}
	if err := mongox.InsertOnce(ctx, s.c(Items), it); err != nil {
		return fmt.Errorf("store items: %w", err)
	}
	return nil
}

// Flush writes what a load store staged: the lists' entries, markers and heads, the objects and
// items (an existing one is left as it is, as InsertOnce does), and the boxes' latest rows.
func (s *Store) Flush(ctx context.Context) error {
	l := s.load
	if l == nil {
		return nil
	}
	if err := l.lists.Flush(ctx); err != nil {
		return fmt.Errorf("store load: %w", err)
	}
	if err := insertNew(ctx, s.c(Objects), l.created); err != nil {
		return err
	}
	if err := insertNew(ctx, s.c(Items), l.items); err != nil {
		return err
	}
	if len(l.latest) > 0 {
		// SetLatest's guard, in one command: a newer position recorded already stays.
		models := make([]mongo.WriteModel, 0, len(l.latest))
		for id, seq := range l.latest {
			models = append(models, mongo.NewUpdateOneModel().SetFilter(mongox.ByID(id)).SetUpsert(true).
				SetUpdate(bson.D{{Key: "$max", Value: bson.D{{Key: "seq", Value: seq}}}}))
		}
		if _, err := s.c(Latest).BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false)); err != nil {
			return fmt.Errorf("store load latest rows: %w", err)
		}
	}
	l.objects, l.created, l.items, l.latest = map[string]*Object{}, nil, nil, map[string]int64{}
	return nil
}

// insertNew inserts docs in batches, leaving out those that exist.
func insertNew[T any](ctx context.Context, coll *mongo.Collection, docs []T) error {
	const batch = 1000
	for start := 0; start < len(docs); start += batch {
		if _, err := mongox.InsertNew(ctx, coll, docs[start:min(start+batch, len(docs))]); err != nil {
			return fmt.Errorf("store load: %w", err)
		}
	}
	return nil
}
