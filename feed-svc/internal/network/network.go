// Package network reads the projection of the network's events: the global feed (JSON and
// text), public activity, stats and an object's analytics. Private objects appear in none of
// them, as boxes, as authors or in counts.
package network

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/svcdev/svc/feed-svc/internal/feed"
	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
)

// Row kinds of the global feed.
const (
	KindNewSvc = "new_svc" // an object was created
	KindItem   = "item"    // an item was published to a feed
)

// Network reads the projection.
type Network struct{ Store *store.Store }

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
	Limit  int
	Cursor string // rows older than this row id
}

// GlobalPage is a page of the global feed; Total counts every row the query selects.
type GlobalPage struct {
	Items      []Row   `json:"items"`
	Total      int     `json:"total"`
	NextCursor *string `json:"next_cursor"`
}

// view is the projection as one read sees it: the public objects with their current hashes.
type view struct {
	public  map[string]store.Object
	private []string
}

func (n *Network) view(ctx context.Context) (*view, error) {
	all, err := n.Store.Objects(ctx)
	if err != nil {
		return nil, err
	}
	v := &view{public: map[string]store.Object{}}
	for id, o := range all {
		if o.Visibility == "private" {
			v.private = append(v.private, id)
		} else {
			v.public[id] = o
		}
	}
	return v, nil
}

// Global reads the global feed, newest first.
func (n *Network) Global(ctx context.Context, q Query) (*GlobalPage, error) {
	types := []string{events.ObjectCreated, events.FeedItemPublished}
	switch q.Kind {
	case KindNewSvc:
		types = types[:1]
	case KindItem:
		types = types[1:]
	}
	v, err := n.view(ctx)
	if err != nil {
		return nil, err
	}
	evs, err := n.Store.EventsOf(ctx, types, "", time.Time{})
	if err != nil {
		return nil, err
	}
	var itemIDs []string
	for _, e := range evs {
		if e.ItemID != "" {
			itemIDs = append(itemIDs, e.ItemID)
		}
	}
	hidden, err := n.Store.HiddenAmong(ctx, itemIDs)
	if err != nil {
		return nil, err
	}
	rows := []Row{}
	seen := map[string]bool{}
	for _, e := range evs {
		row, ok := v.row(e, hidden)
		if !ok || (q.Unique && seen[e.ObjectID]) {
			continue
		}
		seen[e.ObjectID] = true
		rows = append(rows, row)
	}
	page := &GlobalPage{Total: len(rows)}
	start := 0
	if q.Cursor != "" {
		for start < len(rows) && rows[start].ID >= q.Cursor {
			start++
		}
	}
	page.Items, page.NextCursor = httpx.Page(rows[start:], q.Limit, func(r Row) string { return r.ID })
	return page, nil
}

// row renders an event as a feed row, or reports that no public row shows it.
func (v *view) row(e store.Event, hidden map[string]bool) (Row, bool) {
	box, ok := v.public[e.ObjectID]
	if !ok {
		return Row{}, false
	}
	author := box
	if e.Type != events.ObjectCreated {
		if author, ok = v.public[e.AuthorID]; !ok || hidden[e.ItemID] {
			return Row{}, false
		}
	}
	return RowOf(e, box, author)
}

// RowOf renders an event of box as its feed row, by author (the box itself for its creation), or
// reports that no public row shows it: either is private. The feed reads and the feed stream
// render rows here, so both show the same row.
func RowOf(e store.Event, box, author store.Object) (Row, bool) {
	if box.Visibility == "private" || author.Visibility == "private" {
		return Row{}, false
	}
	if e.Type == events.ObjectCreated {
		name := box.Title
		if name == "" {
			name = box.Hash
		}
		return Row{Kind: KindNewSvc, Hash: box.Hash, ID: e.ID, Title: "New svc: " + name,
			Who: &feed.Who{Svc: box.Hash, Name: name}, Tags: []string{}, PostedAt: clock.Format(e.At)}, true
	}
	tags := e.Tags
	if tags == nil {
		tags = []string{}
	}
	// Item rows are keyed by their event id too, so one cursor orders both kinds.
	return Row{Kind: KindItem, Hash: box.Hash, ID: e.ID, Title: e.Title, Body: e.Body,
		Who: &feed.Who{Svc: author.Hash, Name: e.AuthorName}, Tags: tags, PostedAt: clock.Format(e.At)}, true
}

// ValidRowID is the cursor check of the global feed and activity.
func ValidRowID(s string) bool { return strings.HasPrefix(s, "evt_") && len(s) <= 64 }

// Activity is one entry of public activity.
type Activity struct {
	Type string `json:"type"`
	Hash string `json:"hash"`
	At   string `json:"at"`
}

// ActivityPage is a page of activity, newest first.
type ActivityPage struct {
	Items      []Activity `json:"items"`
	NextCursor *string    `json:"next_cursor"`
}

// activityTypes are the events shown as activity.
var activityTypes = []string{
	events.ObjectCreated, events.ObjectHashChanged, events.ContextUpdated,
	events.MessageCreated, events.ClaimVerified, events.FeedItemPublished,
}

// Activity reads public activity older than cursor, newest first.
func (n *Network) Activity(ctx context.Context, cursor string, limit int) (*ActivityPage, error) {
	v, err := n.view(ctx)
	if err != nil {
		return nil, err
	}
	evs, err := n.Store.EventsOf(ctx, activityTypes, "", time.Time{})
	if err != nil {
		return nil, err
	}
	type entry struct {
		id string
		a  Activity
	}
	var list []entry
	for _, e := range evs {
		o, ok := v.public[e.ObjectID]
		if !ok || (cursor != "" && e.ID >= cursor) {
			continue
		}
		list = append(list, entry{e.ID, Activity{Type: e.Type, Hash: o.Hash, At: clock.Format(e.At)}})
		if len(list) > limit {
			break
		}
	}
	list, next := httpx.Page(list, limit, func(e entry) string { return e.id })
	page := &ActivityPage{Items: make([]Activity, 0, len(list)), NextCursor: next}
	for _, e := range list {
		page.Items = append(page.Items, e.a)
	}
	return page, nil
}

// Stats are the network's counts.
type Stats struct {
	IdentifierCount     int64 `json:"identifier_count"`
	MessageCount        int64 `json:"message_count"`
	VerifiedClaimsCount int64 `json:"verified_claims_count"`
}

// Stats counts public objects, the messages they received and their claims verified now. Each
// count counts inserted documents, one per event, so it is exact however many events arrive at
// once; a claim lapses only after it was verified, so verifications less lapses are the claims
// verified now.
func (n *Network) Stats(ctx context.Context) (*Stats, error) {
	v, err := n.view(ctx)
	if err != nil {
		return nil, err
	}
	s := &Stats{IdentifierCount: int64(len(v.public))}
	if s.MessageCount, err = n.Store.CountEvents(ctx, events.MessageCreated, v.private); err != nil {
		return nil, err
	}
	if s.VerifiedClaimsCount, err = n.Store.CountEvents(ctx, events.ClaimVerified, v.private); err != nil {
		return nil, err
	}
	lapsed, err := n.Store.CountEvents(ctx, events.ClaimLapsed, v.private)
	if err != nil {
		return nil, err
	}
	s.VerifiedClaimsCount = max(0, s.VerifiedClaimsCount-lapsed)
	return s, nil
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
		return 0, httpx.BadRequest(httpx.CodeInvalidRequest, "range must be a number of days such as 30d")
	}
	days, _ := strconv.Atoi(m[1])
	if days < 1 || days > MaxRangeDays {
		return 0, httpx.BadRequest(httpx.CodeInvalidRequest, "range must be from 1d to %dd", MaxRangeDays)
	}
	return days, nil
}

// Analytics counts what happened to an object over the last days (today included, UTC).
func (n *Network) Analytics(ctx context.Context, objectID string, days int) (*Analytics, error) {
	today := clock.Now().UTC().Truncate(24 * time.Hour)
	since := today.AddDate(0, 0, -(days - 1))
	evs, err := n.Store.EventsOf(ctx, []string{events.MessageCreated, events.FeedItemPublished,
		events.ContextUpdated, events.ClaimVerified}, objectID, since)
	if err != nil {
		return nil, err
	}
	a := &Analytics{Range: strconv.Itoa(days) + "d", Series: make([]Day, days)}
	for i := range a.Series {
		a.Series[i].Date = since.AddDate(0, 0, i).Format(time.DateOnly)
	}
	for _, e := range evs {
		i := int(e.At.UTC().Sub(since) / (24 * time.Hour))
		if i < 0 || i >= days {
			continue
		}
		for _, c := range []*Counts{&a.Series[i].Counts, &a.Totals} {
			switch e.Type {
			case events.MessageCreated:
				c.Messages++
			case events.FeedItemPublished:
				c.FeedItems++
			case events.ContextUpdated:
				c.ContextUpdates++
			case events.ClaimVerified:
				c.VerifiedClaims++
			}
		}
	}
	return a, nil
}
