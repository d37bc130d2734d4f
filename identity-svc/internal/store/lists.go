package store

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sync/errgroup"

	"github.com/svcdev/svc/pkg/mongox"
)

// Lists read in pages are mongox.Log lists in the Lists collection, so that a page is point reads
// on _id whatever the store holds (FerretDB pushes down nothing else):
//
//	directory               public objects, appended as they are created (InsertObject)
//	<object>/keys           the object's sub-keys, appended once stored (InsertSubKey)
//	<object>/associations   the object's associations, appended once stored
//	<object>/claims         the object's claim facts (verifications, lapses), once per fact id
//
// Removal is an insert elsewhere (a revocation, an association deletion) that a page reads by id
// for each entry, so a page of a list whose entries were mostly removed costs at most a budget of
// reads (mongox.PageWhere) and comes back short, with a next position.
const directoryList = "directory"

func keysList(objectID string) string         { return objectID + "/keys" }
func associationsList(objectID string) string { return objectID + "/associations" }
func claimsList(objectID string) string       { return objectID + "/claims" }

// pageReaders bounds the reads one page sends at once for the entries it judges (the objects a
// directory page folds, the revocations of a page of keys).
const pageReaders = 8

// readPage reads a page of list below p.Before, newest first, and the position of the next page
// (0 on the last): read turns each entry into what the page shows, or nil to skip it (removed,
// or not matching). A batch's entries are read pageReaders at a time; a page reads at most
// pageBudget entries per entry asked for, so one whose entries are mostly skipped comes back
// short, with a next position (mongox.PageWhereBatch).
func readPage[E, V any](ctx context.Context, s *Store, list string, p Page,
	read func(context.Context, mongox.Entry[E]) (*V, error)) ([]V, int64, error) {
	shown := map[int64]*V{}
	kept, next, err := mongox.PageWhereBatch(ctx, s.lists, list, p.Before, p.Limit, pageBudget*p.Limit,
		func(ctx context.Context, entries []mongox.Entry[E]) ([]bool, error) {
			values := make([]*V, len(entries))
			g, gctx := errgroup.WithContext(ctx)
			g.SetLimit(pageReaders)
			for i, e := range entries {
				g.Go(func() (err error) { values[i], err = read(gctx, e); return err })
			}
			if err := g.Wait(); err != nil {
				return nil, err
			}
			verdicts := make([]bool, len(entries))
			for i, v := range values {
				if verdicts[i] = v != nil; v != nil {
					shown[entries[i].Seq] = v
				}
			}
			return verdicts, nil
		})
	if err != nil {
		return nil, 0, err
	}
	out := make([]V, len(kept))
	for i, e := range kept {
		out[i] = *shown[e.Seq]
	}
	return out, next, nil
}

// listOrUndo appends v to list for the document id just stored in coll; if the append fails, the
// document is removed again (with the event staged in it) and the error returned, so that no
// stored document is missing from its list.
func (s *Store) listOrUndo(ctx context.Context, list string, v any, coll, id string) error {
	if _, err := mongox.Append(ctx, s.lists, list, v); err != nil {
		if _, undo := s.deleteOne(ctx, coll, mongox.ByID(id)); undo != nil {
			return errors.Join(fmt.Errorf("list in %s: %w", list, err), fmt.Errorf("undo %s: %w", coll, undo))
		}
		return fmt.Errorf("list in %s: %w", list, err)
	}
	return nil
}

// pageBudget is how many entries a filtered page reads at most per entry it was asked for.
const pageBudget = 4

// visibilityPublic is the visibility of the objects the directory lists.
const visibilityPublic = "public"

// Page asks for a page of a list: up to Limit entries below position Before (0: the newest).
type Page struct {
	Before int64
	Limit  int
}
