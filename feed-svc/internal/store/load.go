package store

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/mongox"
)

// load is what a store made by NewLoad stages for its Flush instead of writing it: the lists'
// documents, the boxes' newest rows, counts, new objects and items. Objects created or read
// during the load are kept until the Flush, so that the consumer's reads of them cost nothing.
type load struct {
	pages   []any
	newest  map[string]keyed[Row] // by pointer id
	marks   []countedMark
	marked  map[string]bool
	deltas  map[string]int64
	daily   map[string]int64
	objects map[string]*Object
	created []Object
	items   []Item
}

func newLoad() *load {
	return &load{newest: map[string]keyed[Row]{}, marked: map[string]bool{}, deltas: map[string]int64{},
		daily: map[string]int64{}, objects: map[string]*Object{}}
}

// NewLoad returns a store over db that writes in bulk, for a preload of new events (a benchmark's
// store at a given size): the consumer's code run over it stages the documents it would write,
// and Flush writes them with insertMany batches, so the store holds what the consumer would have
// written. Every document is keyed by its data, so a live consumer writing beside the preload
// never needs a key the preload takes. Not safe for concurrent use.
func NewLoad(db *mongo.Database) *Store {
	s := New(db)
	s.load = newLoad()
	return s
}

// Staged is how many documents a load store holds for its next Flush.
func (s *Store) Staged() int {
	if s.load == nil {
		return 0
	}
	l := s.load
	return len(l.pages) + len(l.newest) + len(l.marks) + len(l.daily) + len(l.created) + len(l.items)
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

// Flush writes what a load store staged: the lists' documents (one that exists is left as it
// is, as the consumer's inserts do), the boxes' newest rows, the counts, the objects and items.
func (s *Store) Flush(ctx context.Context) error {
	l := s.load
	if l == nil {
		return nil
	}
	if _, err := insertNewBatches(ctx, s.c(Pages), l.pages); err != nil {
		return err
	}
	if err := s.flushNewest(ctx, l); err != nil {
		return err
	}
	if err := s.flushCounts(ctx, l); err != nil {
		return err
	}
	if _, err := insertNewBatches(ctx, s.c(Objects), l.created); err != nil {
		return err
	}
	if _, err := insertNewBatches(ctx, s.c(Items), l.items); err != nil {
		return err
	}
	*l = *newLoad()
	return nil
}

// flushNewest moves the boxes' newest rows as SetNewest does, a batch of boxes at a time: one
// read of their pointers and batched writes.
func (s *Store) flushNewest(ctx context.Context, l *load) error {
	const batch = 1000
	pids := make([]string, 0, len(l.newest))
	for pid := range l.newest {
		pids = append(pids, pid)
	}
	for start := 0; start < len(pids); start += batch {
		if err := s.moveNewestBatch(ctx, l, pids[start:min(start+batch, len(pids))]); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) moveNewestBatch(ctx context.Context, l *load, pids []string) error {
	ids := make(bson.A, len(pids))
	for i, pid := range pids {
		ids[i] = pid
	}
	cur, err := mongox.FindAll[newest](ctx, s.c(Pages), bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}})
	if err != nil {
		return fmt.Errorf("store load newest rows: %w", err)
	}
	old := make(map[string]string, len(cur))
	for _, n := range cur {
		old[n.ID] = n.Key
	}
	var docs []any
	var pointers []mongo.WriteModel
	var stale bson.A
	for _, pid := range pids {
		doc := l.newest[pid]
		if old[pid] >= doc.ID {
			continue
		}
		docs = append(docs, doc)
		pointers = append(pointers, mongo.NewReplaceOneModel().SetFilter(mongox.ByID(pid)).
			SetReplacement(newest{ID: pid, Key: doc.ID}).SetUpsert(true))
		if old[pid] != "" {
			stale = append(stale, old[pid])
		}
	}
	if _, err := insertNewBatches(ctx, s.c(Pages), docs); err != nil {
		return err
	}
	if len(pointers) > 0 {
		if _, err := s.c(Pages).BulkWrite(ctx, pointers); err != nil {
			return fmt.Errorf("store load newest rows: %w", err)
		}
	}
	if len(stale) > 0 {
		if _, err := s.c(Pages).DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: stale}}}}); err != nil {
			return fmt.Errorf("store load newest rows: %w", err)
		}
	}
	return nil
}

// insertNewBatches inserts docs a thousand at a time, leaving out those that exist, and reports
// which went in.
func insertNewBatches[T any](ctx context.Context, coll *mongo.Collection, docs []T) ([]bool, error) {
	in, err := mongox.InsertNewInBatches(ctx, coll, docs, 1000)
	if err != nil {
		return nil, fmt.Errorf("store load: %w", err)
	}
	return in, nil
}
