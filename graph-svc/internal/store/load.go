package store

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/mongox"
)

// load is what a store made by NewLoad stages for its Flush instead of writing it: the appends
// to graph_log's lists (a mongox.LogLoad), and new sources and pulls.
type load struct {
	log     *mongox.LogLoad
	fresh   map[string]bool // node ids declared never stored (see Fresh)
	sources []Source
	pulls   []Pull
}

// NewLoad returns a store over db that writes in bulk, for a preload while nothing else writes
// the same lists (a benchmark's store at a given size): the service's code run over it stages
// its list appends, sources and pulls, and Flush writes them with insertMany batches, so the
// store holds what that code would have written one write at a time. Nodes, threads and the
// memory index are written as they come (in batches already). Not safe for concurrent use.
func NewLoad(db *mongo.Database) *Store {
	s := New(db)
	s.load = &load{log: s.log.Load(), fresh: map[string]bool{}}
	return s
}

// Fresh declares node ids never stored (the nodes of messages never projected) and the keys of
// list entries never appended, so that a load reads neither.
func (s *Store) Fresh(ids ...string) {
	if s.load == nil {
		return
	}
	for _, id := range ids {
		s.load.fresh[id] = true
	}
	s.load.log.Fresh(ids...)
}

// Staged is how many documents a load store holds for its next Flush.
func (s *Store) Staged() int {
	if s.load == nil {
		return 0
	}
	return s.load.log.Staged() + len(s.load.sources) + len(s.load.pulls)
}

// Flush writes what a load store staged.
func (s *Store) Flush(ctx context.Context) error {
	l := s.load
	if l == nil {
		return nil
	}
	if err := l.log.Flush(ctx); err != nil {
		return fmt.Errorf("store load: %w", err)
	}
	if err := insertAll(ctx, s.c(Sources), l.sources); err != nil {
		return err
	}
	if err := insertAll(ctx, s.c(Pulls), l.pulls); err != nil {
		return err
	}
	l.fresh, l.sources, l.pulls = map[string]bool{}, nil, nil
	return nil
}

// insertAll inserts new documents in batches; one that exists is an error, as InsertSource's.
func insertAll[T any](ctx context.Context, coll *mongo.Collection, docs []T) error {
	const batch = 1000
	for start := 0; start < len(docs); start += batch {
		if _, err := coll.InsertMany(ctx, docs[start:min(start+batch, len(docs))]); err != nil {
			return fmt.Errorf("store load into %s: %w", coll.Name(), err)
		}
	}
	return nil
}

// appendTo appends v to a list of graph_log (staged by a load store).
func appendTo[T any](ctx context.Context, s *Store, list string, v T) (int64, error) {
	if s.load != nil {
		seq, _, err := mongox.LoadAppend(ctx, s.load.log, list, "", v)
		return seq, err
	}
	return mongox.Append(ctx, s.log, list, v)
}

// appendOnceTo appends v to a list of graph_log once per key (staged by a load store).
func appendOnceTo[T any](ctx context.Context, s *Store, list, key string, v T) (int64, bool, error) {
	if s.load != nil {
		return mongox.LoadAppend(ctx, s.load.log, list, key, v)
	}
	return mongox.AppendOnce(ctx, s.log, list, key, v)
}

// staged reports whether a load store stages doc instead of inserting it.
func (s *Store) staged(doc any) bool {
	if s.load == nil {
		return false
	}
	switch d := doc.(type) {
	case *Source:
		s.load.sources = append(s.load.sources, *d)
	case *Pull:
		s.load.pulls = append(s.load.pulls, *d)
	default:
		return false
	}
	return true
}

// freshNode reports whether a load store was told that node id was never stored.
func (s *Store) freshNode(id string) bool { return s.load != nil && s.load.fresh[id] }
