package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/mongox"
)

// The lists the reads page through are documents keyed by the data they are read in (Pages,
// mongox.Key): a page is one find of an _id range, newest first, and an append is a blind insert
// of a key that follows from the event, so a redelivered event inserts nothing new and a bulk
// preload can never take a key a live consumer wants for another document.
//
//	g|<feed>|<time>|<id>   a row of the network's feed (feed all, item or new; id: the item, or the box for its creation)
//	u|<feed>|<time>|<box>  a box's newest row of the network's feed (feed all or item), for unique=1
//	n|<feed>|<box>         which u| key is the box's newest, so that a newer row replaces it
//	a|<time>|<event>       public activity
//	i|<box>|<time>|<item>  a box's feed items, hidden ones as tombstones
//
// Times are mongox.Time of the millisecond (what BSON keeps of a time), so that publishing and the
// consumer of its event, which read the time from the event's text, key an item alike.

// Network feeds: which rows of the network's feed a list holds.
const (
	FeedAll     = "all"  // creations and items
	FeedItems   = "item" // items only
	FeedCreated = "new"  // creations only
)

// Row kinds of the network's feed.
const (
	KindNewSvc = "new_svc" // an object was created
	KindItem   = "item"    // an item was published to a feed
)

// Row is one row of the network's feed as its lists keep it: what it shows, less what a page
// looks up (the current hashes of the box and the author).
type Row struct {
	Kind       string    `bson:"kind"`
	EventID    string    `bson:"event_id"`
	BoxID      string    `bson:"box_id"`
	ItemID     string    `bson:"item_id,omitempty"`
	Title      string    `bson:"title"`
	Body       string    `bson:"body,omitempty"`
	Tags       []string  `bson:"tags,omitempty"`
	AuthorID   string    `bson:"author_id,omitempty"`
	AuthorName string    `bson:"author_name,omitempty"`
	At         time.Time `bson:"at"`
}

// rowID is the row's own id in its lists: its item, or its box for a creation.
func (r *Row) rowID() string {
	if r.Kind == KindItem {
		return r.ItemID
	}
	return r.BoxID
}

// Activity is one entry of public activity.
type Activity struct {
	Type  string    `bson:"type"`
	BoxID string    `bson:"box_id"`
	At    time.Time `bson:"at"`
}

// keyed is a document of Pages: its data key and its value.
type keyed[T any] struct {
	ID string `bson:"_id"`
	V  T      `bson:",inline"`
}

// newest is a box's pointer to its newest row's key of a unique list.
type newest struct {
	ID  string `bson:"_id"`
	Key string `bson:"key"`
}

// at is t as a key part: its millisecond, as BSON keeps it.
func at(t time.Time) string { return mongox.Time(t.UTC().Truncate(time.Millisecond)) }

func rowKey(feed string, r *Row) string {
	return mongox.Key("g", feed, at(r.At), mongox.IDPart(r.rowID()))
}
func uniqueKey(feed string, r *Row) string {
	return mongox.Key("u", feed, at(r.At), mongox.IDPart(r.BoxID))
}
func newestID(feed, boxID string) string { return mongox.Key("n", feed, mongox.IDPart(boxID)) }
func activityKey(a *Activity, eventID string) string {
	return mongox.Key("a", at(a.At), mongox.IDPart(eventID))
}

// RowScope is the scope of a network feed's list: its rows, or with unique its boxes' newest.
func RowScope(feed string, unique bool) string {
	if unique {
		return mongox.Scope("u", feed)
	}
	return mongox.Scope("g", feed)
}

// ActivityScope is the scope of public activity.
var ActivityScope = mongox.Scope("a")

// insert inserts docs into Pages, a thousand a command, and reports which went in now.
func (s *Store) insert(ctx context.Context, docs ...any) ([]bool, error) {
	added, err := mongox.InsertNewInBatches(ctx, s.c(Pages), docs, batch)
	if err != nil {
		return nil, fmt.Errorf("store lists: %w", err)
	}
	return added, nil
}

// feedCounters are the counters of the rows of each network feed.
var feedCounters = map[string]string{FeedAll: CounterFeed, FeedItems: CounterItems, FeedCreated: CounterCreated}

// AddRows inserts rows into the lists of the given feeds once each (by its item, or its box for
// a creation), adds one to its feed's counter for each row this call added, and makes each box's
// newest of rows its newest row in the feeds' unique lists (setNewest; the list of creations has
// none: every box has one creation row).
func (s *Store) AddRows(ctx context.Context, rows []Row, feeds ...string) error {
	docs := make([]any, 0, len(rows)*len(feeds))
	for i := range rows {
		for _, f := range feeds {
			docs = append(docs, keyed[Row]{ID: rowKey(f, &rows[i]), V: rows[i]})
		}
	}
	added, err := s.insert(ctx, docs...)
	if err != nil {
		return err
	}
	deltas := map[string]int64{}
	for i, ok := range added {
		if ok {
			deltas[feedCounters[feeds[i%len(feeds)]]]++
		}
	}
	if err := s.count(ctx, nil, deltas); err != nil {
		return err
	}
	return s.setNewest(ctx, rows, slices.DeleteFunc(slices.Clone(feeds), func(f string) bool { return f == FeedCreated }))
}

// setNewest makes, in each of feeds' unique lists, each box's newest of rows its newest row,
// unless a newer one is there: the new keys are inserted, the pointers moved to them and the old
// keys deleted by _id, a few commands for all of rows' boxes together. One box's rows of one feed
// are written by one consumer at a time (its items come in order on one partition of the feed
// topic, and its creation is projected before any item, which waits for the object).
func (s *Store) setNewest(ctx context.Context, rows []Row, feeds []string) error {
	want := map[string]keyed[Row]{}
	for _, f := range feeds {
		for _, r := range rows {
			key, pid := uniqueKey(f, &r), newestID(f, r.BoxID)
			if cur, ok := want[pid]; !ok || cur.ID < key {
				want[pid] = keyed[Row]{ID: key, V: r}
			}
		}
	}
	return s.moveNewest(ctx, want)
}

// moveNewest makes want[pid] the newest row of each box pointer pid, unless a newer one is
// there, a thousand boxes at a time: one read of their pointers, an insert of the new rows, the
// pointers' replacements and a delete of the rows they replace.
func (s *Store) moveNewest(ctx context.Context, want map[string]keyed[Row]) error {
	for pids := range slices.Chunk(slices.Sorted(maps.Keys(want)), batch) {
		if err := s.moveNewestBatch(ctx, want, pids); err != nil {
			return fmt.Errorf("store newest rows: %w", err)
		}
	}
	return nil
}

func (s *Store) moveNewestBatch(ctx context.Context, want map[string]keyed[Row], pids []string) error {
	cur, err := mongox.FindIn[newest](ctx, s.c(Pages), pids)
	if err != nil {
		return err
	}
	old := make(map[string]string, len(cur))
	for _, n := range cur {
		old[n.ID] = n.Key
	}
	var docs []any
	var pointers []mongo.WriteModel
	var stale []string
	for _, pid := range pids {
		doc := want[pid]
		if old[pid] >= doc.ID {
			continue // this row or a newer one is the box's newest already
		}
		docs = append(docs, doc)
		pointers = append(pointers, mongo.NewReplaceOneModel().SetFilter(mongox.ByID(pid)).
			SetReplacement(newest{ID: pid, Key: doc.ID}).SetUpsert(true))
		if old[pid] != "" {
			stale = append(stale, old[pid])
		}
	}
	if len(docs) == 0 {
		return nil
	}
	if _, err := mongox.InsertNew(ctx, s.c(Pages), docs); err != nil {
		return err
	}
	if err := mongox.BulkUpsert(ctx, s.c(Pages), pointers); err != nil {
		return err
	}
	return mongox.DeleteIn(ctx, s.c(Pages), stale)
}

// UnlistItem takes a hidden item's rows out of the network's feed, by _id: its rows and, where it
// is its box's newest, its unique rows (the box then shows no row there until it publishes
// again, as before).
func (s *Store) UnlistItem(ctx context.Context, r Row) error {
	ids := []string{rowKey(FeedAll, &r), rowKey(FeedItems, &r), uniqueKey(FeedAll, &r), uniqueKey(FeedItems, &r)}
	if err := mongox.DeleteIn(ctx, s.c(Pages), ids); err != nil {
		return fmt.Errorf("store lists: %w", err)
	}
	return nil
}

// pageOf reads one page of a list below before (a key of the list; "": from the newest), newest
// first, and the key to pass for the following page ("": none left): limit+1 documents, the
// last of which only says that there is more.
func pageOf[T any](ctx context.Context, s *Store, scope, before string, limit int, projection any) ([]keyed[T], string, error) {
	r := mongox.Range{Scope: scope, Before: before, Desc: true, Limit: limit + 1}
	o := r.Options()
	if projection != nil {
		o.SetProjection(projection)
	}
	docs, err := mongox.FindAll[keyed[T]](ctx, s.c(Pages), r.Filter(), o)
	if err != nil {
		return nil, "", fmt.Errorf("store lists %s: %w", scope, err)
	}
	if len(docs) <= limit {
		return docs, "", nil
	}
	docs = docs[:limit]
	return docs, docs[limit-1].ID, nil
}

// values reads one page of a list as pageOf does, and returns its documents' values.
func values[T any](ctx context.Context, s *Store, scope, before string, limit int) ([]T, string, error) {
	docs, next, err := pageOf[T](ctx, s, scope, before, limit, nil)
	if err != nil {
		return nil, "", err
	}
	out := make([]T, len(docs))
	for i, d := range docs {
		out[i] = d.V
	}
	return out, next, nil
}

// Rows reads a page of a network feed's list (with unique, its boxes' newest rows), newest first,
// below before ("" from the newest); without bodies an item's body is not read.
func (s *Store) Rows(ctx context.Context, feed string, unique, bodies bool, before string, limit int) ([]Row, string, error) {
	var projection any
	if !bodies {
		projection = bson.D{{Key: "body", Value: 0}}
	}
	docs, next, err := pageOf[Row](ctx, s, RowScope(feed, unique), before, limit, projection)
	if err != nil {
		return nil, "", err
	}
	rows := make([]Row, 0, len(docs))
	var stale []string
	seen := map[string]bool{}
	for _, d := range docs {
		// A unique list holds one row per box; a row that two writers of one box left behind
		// (FerretDB rewrites the pointer without a lock) is older than the box's first row on
		// the page: it is left out and deleted.
		if unique && seen[d.V.BoxID] {
			stale = append(stale, d.ID)
			continue
		}
		seen[d.V.BoxID] = true
		rows = append(rows, d.V)
	}
	if err := mongox.DeleteIn(ctx, s.c(Pages), stale); err != nil {
		return nil, "", fmt.Errorf("store lists: drop stale newest rows: %w", err)
	}
	return rows, next, nil
}

// ActivityPage reads a page of public activity, newest first, below before ("" from the newest).
func (s *Store) ActivityPage(ctx context.Context, before string, limit int) ([]Activity, string, error) {
	return values[Activity](ctx, s, ActivityScope, before, limit)
}
