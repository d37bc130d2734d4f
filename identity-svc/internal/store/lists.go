package store

import (
	"context"

	"golang.org/x/sync/errgroup"
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

// eachAtOnce calls read for 0 … n-1, pageReaders at a time, and returns the first error.
func eachAtOnce(ctx context.Context, n int, read func(ctx context.Context, i int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(pageReaders)
	for i := range n {
		g.Go(func() error { return read(gctx, i) })
	}
	return g.Wait()
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
