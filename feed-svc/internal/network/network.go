// Package network reads the projection of the network's events: the global feed (JSON and
// text), public activity, stats and an object's analytics. Private objects appear in none of
// them, as boxes, as authors or in counts.
package network

import (
	"cmp"
	"context"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/svcdev/svc/feed-svc/internal/feed"
	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/mongox"
)

// Row kinds of the global feed.
const (
	KindNewSvc = store.KindNewSvc
	KindItem   = store.KindItem
)

// Network reads the projection.
type Network struct{ Store RowStore }

// RowStore is what the network reads: the lists of rows and activity, and the objects and items
// they name.
type RowStore interface {
	ActivityPage(ctx context.Context, before int64, limit int) ([]mongox.Entry[store.Activity], int64, error)
	HiddenAmong(ctx context.Context, ids []string) (map[string]bool, error)
	IsLatest(ctx context.Context, list, boxID string, seq int64) (bool, error)
	Item(ctx context.Context, feedID, itemID string) (*store.Item, error)
	Len(ctx context.Context, list string) (int64, error)
	ObjectsOf(ctx context.Context, ids []string) (map[string]*store.Object, error)
	Rows(ctx context.Context, list string, before int64, limit int) ([]mongox.Entry[store.Row], int64, error)
}

// Row is one row of the global feed: the fields of a feed item, with the row's kind and the
// current hash of the box it is about.
type Row struct {
	ID       string    `json:"id"`
	Kind     string    `json:"kind"`
	Hash     string    `json:"hash"`
	Title    string    `json:"title"`
	Body     string    `json:"body"`
	Who      *feed.Who `json:"who"`
	Tags     []string  `json:"tags"`
	PostedAt string    `json:"posted_at"`
}

// Query selects rows of the global feed.
type Query struct {
	Kind   string // "", KindNewSvc or KindItem
	Unique bool   // one row per box, its newest
	Bodies bool   // read items' bodies (the JSON feed shows them, feed.txt does not)
	Limit  int
	Before int64 // rows below this position of the query's list (0: from the newest)
}

// list is the list a query pages through; its name is also the scope of its cursors.
func (q Query) list() string {
	switch q.Kind {
	case KindNewSvc:
		return store.ListGlobalCreated
	case KindItem:
		return store.ListGlobalItems
	}
	return store.ListGlobal
}

// Scope is the scope of the query's cursors: a cursor of one list or mode is refused by another.
func (q Query) Scope() string {
	if q.Unique {
		return q.list() + "|unique"
	}
	return q.list()
}

// GlobalPage is a page of the global feed; Total counts every row the query selects. Next is
// the position of the following page (0: none left).
type GlobalPage struct {
	Items []Row
	Total int64
	Next  int64
}

// maxScan bounds the entries one page looks at, in pages' worth, when it leaves some out (hidden
// items, rows that are not their box's newest): such a page may hold fewer rows than its limit,
// and its cursor goes on from where it stopped.
const maxScan = 2

// Global reads a page of the global feed, newest first: it reads the entries of one list, page by
// page, and looks up only what the rows it keeps name.
func (n *Network) Global(ctx context.Context, q Query) (*GlobalPage, error) {
	total, err := n.total(ctx, q)
	if err != nil {
		return nil, err
	}
	var kept []mongox.Entry[store.Row]
	before, scanned := q.Before, 0
	for len(kept) < q.Limit && scanned < maxScan*q.Limit {
		entries, next, err := n.Store.Rows(ctx, q.list(), before, q.Limit-len(kept))
		if err != nil {
			return nil, err
		}
		scanned += len(entries)
		keep, err := n.visible(ctx, q, entries)
		if err != nil {
			return nil, err
		}
		kept = append(kept, keep...)
		if before = next; next == 0 {
			break
		}
	}
	// Partitions are projected side by side, so a list's order is the order events were projected
	// in, which may differ from their times by moments: a page shows its rows by time.
	slices.SortStableFunc(kept, func(a, b mongox.Entry[store.Row]) int {
		return cmp.Or(b.Value.At.Compare(a.Value.At), cmp.Compare(b.Value.EventID, a.Value.EventID))
	})
	rows, err := n.rows(ctx, kept, q.Bodies)
	if err != nil {
		return nil, err
	}
	return &GlobalPage{Items: rows, Total: total, Next: before}, nil
}

// total is the number of rows a query selects, from the lists' lengths.
func (n *Network) total(ctx context.Context, q Query) (int64, error) {
	switch {
	case q.Kind == KindNewSvc || (q.Unique && q.Kind == ""):
		return n.Store.Len(ctx, store.ListGlobalCreated) // every public box has its creation row
	case q.Unique:
		return n.Store.Len(ctx, store.ListBoxesWithItems)
	}
	all, err := n.Store.Len(ctx, q.list())
	if err != nil {
		return 0, err
	}
	hidden, err := n.Store.Len(ctx, store.ListHiddenItems)
	if err != nil {
		return 0, err
	}
	return max(0, all-hidden), nil
}

// visible keeps the entries the query shows: with unique, their box's newest; and not hidden.
// Each check is a point read per entry, the cheaper filter first.
func (n *Network) visible(ctx context.Context, q Query, entries []mongox.Entry[store.Row]) ([]mongox.Entry[store.Row], error) {
	if q.Unique && q.Kind != KindNewSvc {
		newest := entries[:0:0]
		for _, e := range entries {
			ok, err := n.Store.IsLatest(ctx, q.list(), e.Value.BoxID, e.Seq)
			if err != nil {
				return nil, err
			}
			if ok {
				newest = append(newest, e)
			}
		}
		entries = newest
	}
	var items []string
	for _, e := range entries {
		if e.Value.ItemID != "" {
			items = append(items, e.Value.ItemID)
		}
	}
	hidden, err := n.Store.HiddenAmong(ctx, items)
	if err != nil {
		return nil, err
	}
	var out []mongox.Entry[store.Row]
	for _, e := range entries {
		if !hidden[e.Value.ItemID] {
			out = append(out, e)
		}
	}
	return out, nil
}

// rows renders entries with the current hashes of their boxes and authors, and with bodies.
func (n *Network) rows(ctx context.Context, entries []mongox.Entry[store.Row], bodies bool) ([]Row, error) {
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.Value.BoxID, e.Value.AuthorID)
	}
	objects, err := n.Store.ObjectsOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	rows := make([]Row, 0, len(entries))
	for _, e := range entries {
		r := e.Value
		box, ok := objects[r.BoxID]
		if !ok {
			continue // never: a row is appended after its box
		}
		author := box
		if r.Kind != KindNewSvc {
			if author, ok = objects[r.AuthorID]; !ok {
				author = &store.Object{ID: r.AuthorID} // a row is appended after its author; its hash is then unknown
			}
		}
		body := ""
		if bodies && r.Kind != KindNewSvc {
			it, err := n.Store.Item(ctx, r.BoxID, r.ItemID)
			if err != nil {
				return nil, err
			}
			body = it.Body
		}
		if row, ok := RowOf(r, box, author, body); ok {
			rows = append(rows, row)
		}
	}
	return rows, nil
}

// RowOf renders a feed row with its box and author as the projection knows them (the box itself
// for its creation), or reports that no public row shows it: either is private. The feed reads
// and the feed stream render rows here, so both show the same row.
func RowOf(r store.Row, box, author *store.Object, body string) (Row, bool) {
	if box.Private() || author.Private() {
		return Row{}, false
	}
	row := Row{ID: r.EventID, Kind: r.Kind, Hash: box.Hash, Title: r.Title, Tags: r.Tags, PostedAt: clock.Format(r.At)}
	if row.Tags == nil {
		row.Tags = []string{}
	}
	if r.Kind == KindNewSvc {
		name := box.Title
		if name == "" {
			name = box.Hash
		}
		row.Title, row.Who = "New svc: "+name, feed.PublicWho(box.Hash, name)
		return row, true
	}
	row.Who, row.Body = feed.PublicWho(author.Hash, r.AuthorName), body
	return row, true
}

// Activity is one entry of public activity.
type Activity struct {
	Type string `json:"type"`
	Hash string `json:"hash"`
	At   string `json:"at"`
}

// ActivityPage is a page of activity, newest first; Next is the position of the following page.
type ActivityPage struct {
	Items []Activity
	Next  int64
}

// Activity reads a page of public activity below position before (0: from the newest).
func (n *Network) Activity(ctx context.Context, before int64, limit int) (*ActivityPage, error) {
	entries, next, err := n.Store.ActivityPage(ctx, before, limit)
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(entries, func(a, b mongox.Entry[store.Activity]) int { return b.Value.At.Compare(a.Value.At) })
	ids := make([]string, 0, len(entries))
	for _, e := range entries {
		ids = append(ids, e.Value.BoxID)
	}
	objects, err := n.Store.ObjectsOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	page := &ActivityPage{Items: make([]Activity, 0, len(entries)), Next: next}
	for _, e := range entries {
		if o, ok := objects[e.Value.BoxID]; ok {
			page.Items = append(page.Items, Activity{Type: e.Value.Type, Hash: o.Hash, At: clock.Format(e.Value.At)})
		}
	}
	return page, nil
}

// Stats are the network's counts.
type Stats struct {
	IdentifierCount     int64 `json:"identifier_count"`
	MessageCount        int64 `json:"message_count"`
	VerifiedClaimsCount int64 `json:"verified_claims_count"`
}

// Stats reads the network's counters: the lengths of the lists the consumer keeps, one per
// count. A claim lapses only after it was verified, so verifications less lapses are the claims
// verified now.
func (n *Network) Stats(ctx context.Context) (*Stats, error) {
	var s Stats
	var verified, lapsed int64
	for list, dst := range map[string]*int64{
		store.ListGlobalCreated: &s.IdentifierCount, store.ListMessages: &s.MessageCount,
		store.ListClaimsVerified: &verified, store.ListClaimsLapsed: &lapsed,
	} {
		v, err := n.Store.Len(ctx, list)
		if err != nil {
			return nil, err
		}
		*dst = v
	}
	s.VerifiedClaimsCount = max(0, verified-lapsed)
	return &s, nil
}

// Counts are one object's counts over a day or a range.
type Counts struct {
	Messages       int `json:"messages"`
	FeedItems      int `json:"feed_items"`
	ContextUpdates int `json:"context_updates"`
	VerifiedClaims int `json:"verified_claims"`
}

// Day is the counts of one UTC date.
type Day struct {
	Date string `json:"date"`
	Counts
}

// Analytics is an object's counts over a range of days, with one entry per day, oldest first.
type Analytics struct {
	Range  string `json:"range"`
	Totals Counts `json:"totals"`
	Series []Day  `json:"series"`
}

// MaxRangeDays bounds an analytics range.
const MaxRangeDays = 365

var rangePattern = regexp.MustCompile(`^([0-9]{1,3})d$`)

// ParseRange reads a range such as 30d ("" is 30d).
func ParseRange(raw string) (int, error) {
	if raw == "" {
		return 30, nil
	}
	m := rangePattern.FindStringSubmatch(raw)
	if m == nil {
		return 0, apierr.BadRequest(apierr.CodeInvalidRequest, "range must be a number of days such as 30d")
	}
	days, _ := strconv.Atoi(m[1])
	if days < 1 || days > MaxRangeDays {
		return 0, apierr.BadRequest(apierr.CodeInvalidRequest, "range must be from 1d to %dd", MaxRangeDays)
	}
	return days, nil
}

// Analytics reads an object's counts over the last days (today included, UTC): the lengths of
// the per-day lists the consumer keeps, four point reads or so per day.
func (n *Network) Analytics(ctx context.Context, objectID string, days int) (*Analytics, error) {
	today := clock.Now().UTC().Truncate(24 * time.Hour)
	since := today.AddDate(0, 0, -(days - 1))
	a := &Analytics{Range: strconv.Itoa(days) + "d", Series: make([]Day, days)}
	for i := range a.Series {
		day := since.AddDate(0, 0, i)
		a.Series[i].Date = day.Format(time.DateOnly)
		c := &a.Series[i].Counts
		for kind, dst := range map[string]*int{
			store.CountMessages: &c.Messages, store.CountFeedItems: &c.FeedItems,
			store.CountContextUpdates: &c.ContextUpdates, store.CountVerifiedClaims: &c.VerifiedClaims,
		} {
			v, err := n.Store.Len(ctx, store.AnalyticsList(objectID, kind, day))
			if err != nil {
				return nil, err
			}
			*dst = int(v)
		}
		a.Totals.Messages += c.Messages
		a.Totals.FeedItems += c.FeedItems
		a.Totals.ContextUpdates += c.ContextUpdates
		a.Totals.VerifiedClaims += c.VerifiedClaims
	}
	return a, nil
}
