package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"

	"github.com/svcdev/svc/pkg/mongox"
)

// The store-shape guard: every list is an _id range (docs/architecture.md, "Storage"). Every suite
// a test starts reports the queries its services send; when the run ends (TestMain) any filter the
// embedded store cannot serve from its _id index fails the run, unless its collection is bounded
// by design (boundedByDesign, with the reason). Served from the index: _id equality (with other
// conditions beside it: one document), _id $in of 1 to maxIDIn strings, and an _id range, alone,
// sorted by _id or not.

// boundedByDesign are the collections whose filtered queries read what the collection holds,
// which its design keeps small whatever the store holds: each reason says why. (One-off upgrade
// steps mark their context with mongox.Unbounded instead.)
var boundedByDesign = map[string]string{
	"dead_events":      "dead letters: what failed for good, read by an operator's command and its metrics",
	"idempotency_keys": "expired records swept by expires_at (FerretDB has no TTL index): 24 hours of keyed sends",
	"signed_nonces":    "expired nonces swept by expires_at: the minutes a signature may be replayed in",
	"recheck_leases":   "expired leases swept by expires_at: one per claim and period",
	"leases":           "expired leases swept by expires_at: one per item and period",
	"feed_quotas":      "the publishing places of a day, swept hourly by their time: each box and lane at most its cap a day",
	"processed_events": "expired dedupe records swept by expires_at every 10 minutes: the events of the dedupe window of the consumers that keep them",
}

// shapeViolation is one kind of query the guard refuses: where and what.
type shapeViolation struct {
	db, collection, command, shape string
}

var shapeGuard = struct {
	sync.Mutex
	seen map[shapeViolation]int
}{seen: map[shapeViolation]int{}}

// guardMonitor records the queries of every command it sees, then passes each event on to next.
func guardMonitor(next *event.CommandMonitor) *event.CommandMonitor {
	mon := &event.CommandMonitor{}
	if next != nil {
		*mon = *next
	}
	started := mon.Started
	mon.Started = func(ctx context.Context, e *event.CommandStartedEvent) {
		checkShape(ctx, e.DatabaseName, e.CommandName, e.Command)
		if started != nil {
			started(ctx, e)
		}
	}
	return mon
}

// checkShape records each query of a command that the _id index cannot serve.
func checkShape(ctx context.Context, db, name string, cmd bson.Raw) {
	if mongox.UnboundedReason(ctx) != "" {
		return
	}
	coll, _ := cmd.Lookup(name).StringValueOK()
	var filters []bson.Raw
	var sorts []bson.Raw
	doc := func(key string) bson.Raw { d, _ := cmd.Lookup(key).DocumentOK(); return d } // nil when absent
	switch name {
	case "find":
		filters, sorts = append(filters, doc("filter")), append(sorts, doc("sort"))
	case "count", "distinct":
		filters = append(filters, doc("query"))
	case "findAndModify":
		filters, sorts = append(filters, doc("query")), append(sorts, doc("sort"))
	case "update", "delete":
		arr, _ := cmd.Lookup(name + "s").ArrayOK() // updates, deletes
		vals, _ := arr.Values()
		for _, v := range vals {
			if d, ok := v.DocumentOK(); ok {
				q, _ := d.Lookup("q").DocumentOK()
				filters = append(filters, q)
			}
		}
	case "aggregate":
		arr, _ := cmd.Lookup("pipeline").ArrayOK()
		vals, _ := arr.Values()
		var match bson.Raw
		if len(vals) > 0 {
			if st, ok := vals[0].DocumentOK(); ok {
				match, _ = st.Lookup("$match").DocumentOK()
			}
		}
		filters = append(filters, match)
	default:
		return
	}
	for i, f := range filters {
		var sort bson.Raw
		if i < len(sorts) {
			sort = sorts[i]
		}
		if shape, ok := servedByID(f, sort); !ok {
			if _, bounded := boundedByDesign[coll]; bounded {
				continue
			}
			v := shapeViolation{db: db, collection: coll, command: name, shape: shape}
			shapeGuard.Lock()
			shapeGuard.seen[v]++
			shapeGuard.Unlock()
		}
	}
}

// servedByID reports whether the _id index serves filter (and sort), and the filter's shape.
func servedByID(filter, sort bson.Raw) (string, bool) {
	keys := shapeOf(filter)
	shape := "{" + strings.Join(keys, ", ") + "}"
	if sort != nil {
		shape += " sort " + strings.Join(shapeOf(sort), ", ")
	}
	sortKeys, _ := sort.Elements() // none without a sort
	sortByID := !slices.ContainsFunc(sortKeys, func(e bson.RawElement) bool { return e.Key() != "_id" })
	if filter == nil || len(keys) == 0 {
		return shape, false // a whole collection
	}
	id, err := filter.LookupErr("_id")
	if err != nil {
		return shape, false
	}
	ops, isDoc := id.DocumentOK()
	if !isDoc {
		return shape, true // _id equality: one document, whatever else the filter says
	}
	elems, _ := ops.Elements()
	for _, e := range elems {
		switch e.Key() {
		case "$in":
			if len(keys) != 1 {
				return shape, false
			}
			if why := inUnserved(e.Value()); why != "" {
				return shape + " " + why, false
			}
		case "$gt", "$gte", "$lt", "$lte":
			if len(keys) == 1 && sortByID {
				continue
			}
			return shape, false
		case "$eq":
			continue
		default:
			return shape, false
		}
	}
	return shape, true
}

// maxIDIn is the most values of an _id $in that the embedded store reads from its _id index
// (third_party/ferretdb: IDRange); a longer list, an empty one or one of any value but strings
// reads the whole collection. A caller with more ids sends them mongox.MaxIDIn at a time.
const maxIDIn = 1000

// inUnserved says why the _id index cannot serve an _id $in of v ("" when it can), without its
// values: the line the guard reports.
func inUnserved(v bson.RawValue) string {
	arr, ok := v.ArrayOK()
	if !ok {
		return "(not an array)"
	}
	vals, _ := arr.Values()
	switch {
	case len(vals) == 0:
		return "(empty)"
	case len(vals) > maxIDIn:
		return fmt.Sprintf("(more than %d values)", maxIDIn)
	}
	for _, x := range vals {
		if x.Type != bson.TypeString {
			return "(of " + x.Type.String() + " values, not strings)"
		}
	}
	return ""
}

// shapeOf names the fields of d and the operators on them, without values.
func shapeOf(d bson.Raw) []string {
	elems, _ := d.Elements()
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		k := e.Key()
		if sub, ok := e.Value().DocumentOK(); ok {
			if ops := shapeOf(sub); len(ops) > 0 && strings.HasPrefix(ops[0], "$") {
				k += ":" + strings.Join(ops, "+")
			}
		}
		out = append(out, k)
	}
	return out
}

// reportShapes prints what the guard refused and reports whether the run keeps the shape.
func reportShapes() bool {
	shapeGuard.Lock()
	defer shapeGuard.Unlock()
	if len(shapeGuard.seen) == 0 {
		return true
	}
	counts := map[string]int{}
	for v, n := range shapeGuard.seen {
		db := v.db
		if i := strings.LastIndex(db, "_svc"); i >= 0 {
			if j := strings.LastIndex(db[:i], "_"); j >= 0 {
				db = db[j+1:] // the service's database, without the test's prefix
			}
		}
		counts[fmt.Sprintf("  %s.%s %s %s", db, v.collection, v.command, v.shape)] += n
	}
	var lines []string
	for l, n := range counts {
		lines = append(lines, fmt.Sprintf("%s (%d×)", l, n))
	}
	slices.Sort(lines)
	fmt.Fprintf(os.Stderr, "store-shape guard: %d kinds of query the _id index cannot serve (docs/architecture.md, \"Storage\"):\n%s\n",
		len(lines), strings.Join(lines, "\n"))
	return false
}
