package store

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/svcdev/svc/pkg/mongox"
)

// An object's sources, links and decisions are each listed in a mongox.Log of the lists
// collection, so that a page of them is point reads on _id whatever the collections hold:
// FerretDB pushes down only _id equality, so a filter on object_id reads every document of every
// object. The lists are:
//
//   - src:<object>  the ids of the object's sources, oldest first (a source's document may be
//     gone: a create that failed after its entry, or a deleted source; pages skip them);
//   - lnk:<object>  the object's links, each a copy of the link (links never change);
//   - dec:<object>  the decisions recorded in the object's threads, each a copy, appended once
//     per decision id by the consumer of decision.recorded.
func sourceList(objectID string) string   { return "src:" + objectID }
func linkList(objectID string) string     { return "lnk:" + objectID }
func decisionList(objectID string) string { return "dec:" + objectID }

// pageBudget is how many list entries one page reads at most, per entry it returns: entries
// whose document is gone are skipped, and a page that ran out of budget comes back short, with a
// cursor.
const pageBudget = 4

// pageReaders bounds the point reads one page sends at once.
const pageReaders = 8

// pageForward reads list oldest first from the entry after position after (0: from the first),
// keeping the entries keep accepts, until it holds limit of them or has read budget entries. next
// is the position to resume after (0 once the list is exhausted). keep runs concurrently for the
// entries of one batch, which are then taken in list order.
func pageForward[T any](ctx context.Context, l mongox.Log, list string, after int64, limit, budget int,
	keep func(context.Context, mongox.Entry[T]) (bool, error)) (kept []mongox.Entry[T], next int64, err error) {
	kept = []mongox.Entry[T]{}
	n, err := l.Len(ctx, list)
	if err != nil || limit < 1 {
		return kept, 0, err
	}
	budget = max(budget, limit)
	pos := after
	for read := 0; read < budget && len(kept) < limit && pos < n; {
		batch := int64(min(max(limit-len(kept), pageReaders), budget-read))
		batch = min(batch, n-pos)
		entries := make([]mongox.Entry[T], batch)
		ok := make([]bool, batch)
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(pageReaders)
		for i := range batch {
			g.Go(func() error {
				e, err := mongox.Get[T](gctx, l, list, pos+1+i)
				if err != nil {
					return fmt.Errorf("list %s entry %d: %w", list, pos+1+i, err)
				}
				entries[i] = e
				ok[i], err = keep(gctx, e)
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return nil, 0, err
		}
		read += int(batch)
		for i, e := range entries {
			if ok[i] {
				kept = append(kept, e)
			}
			if len(kept) == limit {
				pos = e.Seq
				break
			}
			pos = entries[i].Seq
		}
	}
	if pos >= n {
		return kept, 0, nil
	}
	return kept, pos, nil
}

// readAll point-reads the documents ids name, pageReaders at a time, into a slice in the order
// of ids; an absent one is left nil.
func readAll[T any](ctx context.Context, read func(context.Context, string) (*T, error), ids []string) ([]*T, error) {
	out := make([]*T, len(ids))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(pageReaders)
	for i, id := range ids {
		g.Go(func() error {
			v, err := read(gctx, id)
			if errors.Is(err, mongox.ErrNotFound) {
				return nil
			}
			out[i] = v
			return err
		})
	}
	return out, g.Wait()
}
