package store

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"golang.org/x/sync/errgroup"

	"github.com/svcdev/svc/pkg/mongox"
)

// Lists read in pages are _id ranges of the Ranges collection (mongox.Range), so that a page is
// one find whatever the store holds; ids are ULIDs, so each range is in the order of creation:
//
//	directory|<object>                public objects, put in as they are created (InsertObject)
//	<object>|keys|<key id>            the object's sub-keys, each a copy of what the list shows
//	<object>|associations|<id>        the object's associations, each a copy
//	<object>|claims|<time>|<fact>     the object's claim facts (verifications, lapses)
//
// Removal is an insert elsewhere (a revocation, an association deletion) that a page reads for
// its entries in one find by their ids, so a page of a list whose entries were mostly removed
// reads at most a budget of entries and comes back short, with a cursor.
const (
	directoryPart    = "directory"
	keysPart         = "keys"
	associationsPart = "associations"
	claimsPart       = "claims"
)

// entry is one element of a range: V is a copy of what the list shows.
type entry[V any] = mongox.Keyed[V]

// putEntry inserts v under key; an entry already there is the same one.
func (s *Store) putEntry(ctx context.Context, key string, v any) error {
	return mongox.InsertKeyed(ctx, s.db.Collection(Ranges), key, v)
}

// pageReaders bounds the reads one page sends at once for the entries it judges (the objects a
// directory page folds).
const pageReaders = 8

// pageBudget is how many entries a filtered page reads at most per entry it was asked for.
const pageBudget = 4

// readPage reads a page of the range of scope (its key parts) below the id p.Before, newest
// first, and the id to page on from ("" on the last): one find of up to pageBudget entries per
// entry asked for. judge turns a chunk of entries into what the page shows, nil to skip one
// (removed, or not matching); the chunks are read in order until the page is full, so a page
// whose entries are mostly skipped comes back short, with a cursor.
func readPage[E, V any](ctx context.Context, s *Store, scope []string, p Page, id func(E) string,
	judge func(context.Context, []E) ([]*V, error)) ([]V, string, error) {
	r := mongox.Range{Scope: mongox.Scope(scope...), Desc: true, Limit: pageBudget*p.Limit + 1}
	if p.Before != "" {
		r.Before = mongox.Key(append(scope[:len(scope):len(scope)], mongox.IDPart(p.Before))...)
	}
	entries, err := mongox.Find[entry[E]](ctx, s.db.Collection(Ranges), r)
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", r.Scope, err)
	}
	more := len(entries) > pageBudget*p.Limit
	entries = entries[:min(len(entries), pageBudget*p.Limit)]
	out := []V{}
	for i := 0; i < len(entries); {
		n := min(len(entries)-i, max(p.Limit-len(out), pageReaders))
		chunk := make([]E, n)
		for j := range chunk {
			chunk[j] = entries[i+j].Value
		}
		shown, err := judge(ctx, chunk)
		if err != nil {
			return nil, "", err
		}
		for j, v := range shown {
			if v == nil {
				continue
			}
			out = append(out, *v)
			if len(out) == p.Limit {
				if last := i + j; last < len(entries)-1 || more {
					return out, id(chunk[j]), nil
				}
				return out, "", nil
			}
		}
		i += n
	}
	if more && len(entries) > 0 {
		return out, id(entries[len(entries)-1].Value), nil
	}
	return out, "", nil
}

// judgeEach judges the entries of a chunk one by one, pageReaders at once.
func judgeEach[E, V any](read func(context.Context, E) (*V, error)) func(context.Context, []E) ([]*V, error) {
	return func(ctx context.Context, chunk []E) ([]*V, error) {
		out := make([]*V, len(chunk))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(pageReaders)
		for i, e := range chunk {
			g.Go(func() (err error) { out[i], err = read(gctx, e); return err })
		}
		return out, g.Wait()
	}
}

// listOrUndo puts v into the range under key for the document id just stored in coll; if that
// fails, the document is removed again (with the event staged in it) and the error returned, so
// that no stored document is missing from its list.
func (s *Store) listOrUndo(ctx context.Context, key string, v any, coll, id string) error {
	if err := s.putEntry(ctx, key, v); err != nil {
		if _, undo := s.deleteOne(ctx, coll, mongox.ByID(id)); undo != nil {
			return errors.Join(fmt.Errorf("list %s: %w", key, err), fmt.Errorf("undo %s: %w", coll, undo))
		}
		return fmt.Errorf("list %s: %w", key, err)
	}
	return nil
}

// byIDs selects the documents with the given ids.
func byIDs(ids []string) bson.D {
	return bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}
}

// existing reports which ids of items (id names each) have a document in coll: one find of them.
func existing[E any](ctx context.Context, s *Store, coll string, items []E, id func(E) string) (map[string]bool, error) {
	ids := make([]string, len(items))
	for i, e := range items {
		ids[i] = id(e)
	}
	var docs []struct {
		ID string `bson:"_id"`
	}
	if err := s.all(ctx, coll, byIDs(ids), &docs, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}})); err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(docs))
	for _, d := range docs {
		out[d.ID] = true
	}
	return out, nil
}

// Page asks for a page of a list: up to Limit entries below the id Before ("": the newest).
type Page struct {
	Before string
	Limit  int
}
