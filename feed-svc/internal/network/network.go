// Package network reads the projection of the network's events: the global feed (JSON and
// text), public activity, stats and an object's analytics. Private objects appear in none of
// them, as boxes, as authors or in counts.
package network

import (
	"context"
	"regexp"
	"strconv"
	"time"

	"github.com/svcdev/svc/feed-svc/internal/feed"
	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/clock"
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
	ActivityPage(ctx context.Context, before string, limit int) ([]store.Activity, string, error)
	Counter(ctx context.Context, counter string) (int64, error)
	Daily(ctx context.Context, objectID string, since time.Time) (map[string]map[string]int64, error)
	ObjectsOf(ctx context.Context, ids []string) (map[string]*store.Object, error)
	Rows(ctx context.Context, feed string, unique, bodies bool, before string, limit int) ([]store.Row, string, error)
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
	// BoxTitle is the box's profile title at its creation, for pages that name boxes by title
	// (the API names them by hash).
	BoxTitle string `json:"-"`
}

// Query selects rows of the global feed.
type Query struct {
	Kind   string // "", KindNewSvc or KindItem
	Unique bool   // one row per box, its newest
	Bodies bool   // read items' bodies (the JSON feed shows them, feed.txt does not)
	Limit  int
	Before string // rows below this key of the query's list ("": from the newest)
}

// feed is the network feed a query pages through.
func (q Query) feed() string {
	switch q.Kind {
	case KindNewSvc:
		return store.FeedCreated
	case KindItem:
		return store.FeedItems
	}
	return store.FeedAll
}

// unique reports whether the query reads its feed's boxes' newest rows: every box has one
// creation row, so kind=new_svc is unique by itself.
func (q Query) unique() bool { return q.Unique && q.Kind != KindNewSvc }

// Scope is the scope of the query's cursors (its list's range): a cursor of one list or mode is
// refused by another.
func (q Query) Scope() string { return store.RowScope(q.feed(), q.unique()) }

// GlobalPage is a page of the global feed; Total counts every row the query selects. Next is
// the key of the following page ("": none left).
type GlobalPage struct {
	Items []Row
	Total int64
	Next  string
}

// Global reads a page of the global feed, newest first: one find of its list's range (hidden
// items are out of the lists, and unique lists hold each box's newest row only), one find of the
// objects the rows name, and the query's counter.
func (n *Network) Global(ctx context.Context, q Query) (*GlobalPage, error) {
	total, err := n.total(ctx, q)
	if err != nil {
		return nil, err
	}
	entries, next, err := n.Store.Rows(ctx, q.feed(), q.unique(), q.Bodies, q.Before, q.Limit)
	if err != nil {
		return nil, err
	}
	rows, err := n.rows(ctx, entries)
	if err != nil {
		return nil, err
	}
	return &GlobalPage{Items: rows, Total: total, Next: next}, nil
}

// total is the number of rows a query selects, from the counters the consumer keeps.
func (n *Network) total(ctx context.Context, q Query) (int64, error) {
	counter := store.CounterFeed
	switch {
	case q.Kind == KindNewSvc || (q.Unique && q.Kind == ""):
		counter = store.CounterCreated // every public box has its creation row
	case q.Unique:
		counter = store.CounterBoxesWithItems
	case q.Kind == KindItem:
		counter = store.CounterItems
	}
	v, err := n.Store.Counter(ctx, counter)
	return max(0, v), err
}

// rows renders entries with the current hashes of their boxes and authors.
func (n *Network) rows(ctx context.Context, entries []store.Row) ([]Row, error) {
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.BoxID, e.AuthorID)
	}
	objects, err := n.Store.ObjectsOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	rows := make([]Row, 0, len(entries))
	for _, r := range entries {
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
		if row, ok := RowOf(r, box, author, r.Body); ok {
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
	row := Row{ID: r.EventID, Kind: r.Kind, Hash: box.Hash, Title: r.Title, Tags: r.Tags, PostedAt: clock.Format(r.At), BoxTitle: box.Title}
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

// ActivityPage is a page of activity, newest first; Next is the key of the following page.
type ActivityPage struct {
	Items []Activity
	Next  string
}

// Activity reads a page of public activity below the key before ("": from the newest).
func (n *Network) Activity(ctx context.Context, before string, limit int) (*ActivityPage, error) {
	entries, next, err := n.Store.ActivityPage(ctx, before, limit)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(entries))
	for _, e := range entries {
		ids = append(ids, e.BoxID)
	}
	objects, err := n.Store.ObjectsOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	page := &ActivityPage{Items: make([]Activity, 0, len(entries)), Next: next}
	for _, e := range entries {
		if o, ok := objects[e.BoxID]; ok {
			page.Items = append(page.Items, Activity{Type: e.Type, Hash: o.Hash, At: clock.Format(e.At)})
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

// Stats reads the network's counters the consumer keeps, one find each. A claim lapses only after
// it was verified, so its counter (verifications less lapses) is the claims verified now.
func (n *Network) Stats(ctx context.Context) (*Stats, error) {
	var s Stats
	for counter, dst := range map[string]*int64{
		store.CounterCreated: &s.IdentifierCount, store.CounterMessages: &s.MessageCount,
		store.CounterClaims: &s.VerifiedClaimsCount,
	} {
		v, err := n.Store.Counter(ctx, counter)
		if err != nil {
			return nil, err
		}
		*dst = max(0, v)
	}
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

// Analytics reads an object's counts over the last days (today included, UTC): the per-day
// counters the consumer keeps, in one find of their range.
func (n *Network) Analytics(ctx context.Context, objectID string, days int) (*Analytics, error) {
	today := clock.Now().UTC().Truncate(24 * time.Hour)
	since := today.AddDate(0, 0, -(days - 1))
	counts, err := n.Store.Daily(ctx, objectID, since)
	if err != nil {
		return nil, err
	}
	a := &Analytics{Range: strconv.Itoa(days) + "d", Series: make([]Day, days)}
	for i := range a.Series {
		day := since.AddDate(0, 0, i)
		a.Series[i].Date = day.Format(time.DateOnly)
		c := &a.Series[i].Counts
		of := counts[day.Format("20060102")]
		c.Messages, c.FeedItems = int(of[store.CountMessages]), int(of[store.CountFeedItems])
		c.ContextUpdates, c.VerifiedClaims = int(of[store.CountContextUpdates]), int(of[store.CountVerifiedClaims])
		a.Totals.Messages += c.Messages
		a.Totals.FeedItems += c.FeedItems
		a.Totals.ContextUpdates += c.ContextUpdates
		a.Totals.VerifiedClaims += c.VerifiedClaims
	}
	return a, nil
}
