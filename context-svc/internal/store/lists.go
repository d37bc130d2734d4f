package store

import (
	"context"
	"fmt"

	"github.com/svcdev/svc/pkg/mongox"
)

// An object's sources, links and decisions are each an _id range of the ranges collection
// (mongox.Range), so that a page of them is one find whatever the collections hold:
//
//   - <object>|src|<source id>           the object's sources, oldest first (ids are ULIDs); the
//     entry names the source, whose document a page reads in one find by id (a create that
//     failed after its entry names no document, and is skipped);
//   - <object>|lnk|<link id>             the object's links, each a copy (links never change);
//   - <object>|dec|<time>|<node>         the decisions recorded in the object's threads, each a
//     copy, keyed by when it was made and its node, so that a redelivered decision.recorded
//     inserts nothing new.
const (
	sourcesPart   = "src"
	linksPart     = "lnk"
	decisionsPart = "dec"
)

// insertEntry puts v into the range under key; an entry already there is the same one.
func (s *Store) insertEntry(ctx context.Context, key string, v any) error {
	return mongox.InsertKeyed(ctx, s.ranges, key, v)
}

// page reads the values of the entries of r (an id or a copy, as the range says), in one find.
func page[T any](ctx context.Context, s *Store, r mongox.Range) ([]T, error) {
	entries, err := mongox.Find[mongox.Keyed[T]](ctx, s.ranges, r)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", r.Scope, err)
	}
	out := make([]T, len(entries))
	for i, e := range entries {
		out[i] = e.Value
	}
	return out, nil
}
