package store

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// Lists is the collection of an earlier release's lists (mongox.Log: entry n of list L is the
// document "L#<n>" with seq, key, at and the value v), read only to carry them over.
const Lists = "lists"

// upgraded marks, in Counts, that the earlier release's lists were carried over.
var upgraded = mongox.Key("upgraded", "lists")

// logEntry is an entry of an earlier release's list.
type logEntry struct {
	ID  string    `bson:"_id"`
	Key string    `bson:"key"`
	At  time.Time `bson:"at"`
	V   bson.Raw  `bson:"v"`
}

// upgradeBatch is how many entries the upgrade writes at once.
const upgradeBatch = 500

// UpgradeLists carries the lists of an earlier release (collection Lists) over to the keyed
// lists and counters, once (a marker records it): the network's feeds with their boxes' newest
// rows, public activity, each box's items (hidden ones as tombstones), the network counters and
// the objects' analytics, with the marks that keep a redelivered event from counting twice. It
// reads the old collection once with a cursor and writes in batches; what a consumer of this
// release wrote meanwhile is left as it is and not counted twice (a counter moves by what this
// step inserted). It reports how many entries it read.
func (s *Store) UpgradeLists(ctx context.Context) (int, error) {
	err := mongox.FindOne(ctx, s.c(Counts), mongox.ByID(upgraded), &bson.D{})
	if err == nil {
		return 0, nil
	}
	if !errors.Is(err, mongox.ErrNotFound) {
		return 0, fmt.Errorf("upgrade lists: %w", err)
	}
	// The hidden marks are read once, all of them (a one-off step, outside serving).
	hides, err := mongox.FindAll[Hide](ctx, s.c(Hidden), bson.D{})
	if err != nil {
		return 0, fmt.Errorf("upgrade lists: %w", err)
	}
	u := &upgrade{s: s, hidden: map[string]bool{}, newest: map[string]keyed[Row]{}}
	for _, h := range hides {
		u.hidden[h.ItemID] = true
	}
	cur, err := s.c(Lists).Find(ctx, bson.D{}, options.Find().SetBatchSize(upgradeBatch))
	if err != nil {
		return 0, fmt.Errorf("upgrade lists: %w", err)
	}
	defer cur.Close(ctx)
	n := 0
	for cur.Next(ctx) {
		var e logEntry
		if err := cur.Decode(&e); err != nil {
			return n, fmt.Errorf("upgrade lists: %w", err)
		}
		list, pos, ok := cutLast(e.ID, "#")
		if _, perr := strconv.ParseInt(pos, 10, 64); !ok || perr != nil {
			continue // a head or a key's marker
		}
		if err := u.entry(list, e); err != nil {
			return n, err
		}
		n++
		if u.staged() >= upgradeBatch {
			if err := u.flush(ctx); err != nil {
				return n, err
			}
		}
	}
	if err := cur.Err(); err != nil {
		return n, fmt.Errorf("upgrade lists: %w", err)
	}
	if err := u.flush(ctx); err != nil {
		return n, err
	}
	if err := u.flushNewest(ctx); err != nil {
		return n, err
	}
	for _, r := range u.unlist {
		if err := s.UnlistItem(ctx, r); err != nil {
			return n, err
		}
	}
	if err := mongox.InsertOnce(ctx, s.c(Counts), bson.D{{Key: "_id", Value: upgraded}}); err != nil {
		return n, fmt.Errorf("upgrade lists: %w", err)
	}
	return n, nil
}

func cutLast(s, sep string) (string, string, bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// upgrade stages one batch of carried-over documents.
type upgrade struct {
	s      *Store
	pages  []any           // documents of Pages other than rows
	rows   []keyed[Row]    // rows whose items' bodies are still to read
	feeds  []string        // the feed of each of rows
	marks  []countedMark   // marks that count once inserted
	hidden map[string]bool // hidden item ids
	unlist []Row           // rows of hidden items
	newest map[string]keyed[Row]
}

func (u *upgrade) staged() int { return len(u.pages) + len(u.rows) + len(u.marks) }

// entry stages what one old entry becomes.
func (u *upgrade) entry(list string, e logEntry) error {
	switch {
	case list == "global" || list == "global:item" || list == "global:new_svc":
		var r Row
		if err := bson.Unmarshal(e.V, &r); err != nil {
			return fmt.Errorf("upgrade lists: %s: %w", e.ID, err)
		}
		feed := map[string]string{"global": FeedAll, "global:item": FeedItems, "global:new_svc": FeedCreated}[list]
		if r.ItemID != "" && u.hidden[r.ItemID] {
			u.unlist = append(u.unlist, r) // taken out once carried over, as a hide does
		}
		u.rows, u.feeds = append(u.rows, keyed[Row]{ID: rowKey(feed, &r), V: r}), append(u.feeds, feed)
		if feed != FeedCreated {
			pid := newestID(feed, r.BoxID)
			if cur, ok := u.newest[pid]; !ok || cur.ID < uniqueKey(feed, &r) {
				u.newest[pid] = keyed[Row]{ID: uniqueKey(feed, &r), V: r}
			}
		}
	case list == "activity":
		var a Activity
		if err := bson.Unmarshal(e.V, &a); err != nil {
			return fmt.Errorf("upgrade lists: %s: %w", e.ID, err)
		}
		u.pages = append(u.pages, keyed[Activity]{ID: activityKey(&a, e.Key), V: a})
	case strings.HasPrefix(list, "items:"):
		var it Item
		if err := bson.Unmarshal(e.V, &it); err != nil {
			return fmt.Errorf("upgrade lists: %s: %w", e.ID, err)
		}
		v := ListedItem{Item: it, Hidden: u.hidden[it.ID]}
		if v.Hidden {
			v.Item = tombstone(&it)
		}
		u.pages = append(u.pages, keyed[ListedItem]{ID: itemKey(it.FeedID, it.ID, it.PostedAt), V: v})
	case oldCounts[list].id != "":
		m := oldCounts[list]
		m.id = markID(m.id, e.Key)
		u.marks = append(u.marks, m)
	case strings.HasPrefix(list, "an:"):
		parts := strings.Split(strings.TrimPrefix(list, "an:"), ":")
		if len(parts) != 3 {
			return nil
		}
		day, err := time.Parse(time.DateOnly, parts[2])
		if err != nil {
			return nil
		}
		id := dailyID(parts[0], day, parts[1])
		u.marks = append(u.marks, countedMark{id: markID(id, e.Key), daily: id})
	}
	return nil
}

// oldCounts are the earlier release's lists of counted keys: each entry becomes a mark of the
// counter in id, which counts once in counters by delta.
var oldCounts = map[string]countedMark{
	"global:hidden":         {id: counterHidden, counters: []string{CounterFeed, CounterItems}, delta: -1},
	"boxes:item":            {id: CounterBoxesWithItems, counters: []string{CounterBoxesWithItems}, delta: 1},
	"stats:messages":        {id: CounterMessages, counters: []string{CounterMessages}, delta: 1},
	"stats:claims_verified": {id: CounterClaims, counters: []string{CounterClaims}, delta: 1},
	"stats:claims_lapsed":   {id: CounterClaims, counters: []string{CounterClaims}, delta: -1},
}

// flush writes a batch: rows with their items' bodies, the other documents, the marks, and moves
// the counters by what went in now.
func (u *upgrade) flush(ctx context.Context) error {
	bodies, err := u.bodies(ctx, u.rows)
	if err != nil {
		return err
	}
	docs := make([]any, len(u.rows), len(u.rows)+len(u.pages))
	for i := range u.rows {
		u.rows[i].V.Body = bodies[u.rows[i].V.ItemID]
		docs[i] = u.rows[i]
	}
	in, err := u.s.insert(ctx, append(docs, u.pages...)...)
	if err != nil {
		return fmt.Errorf("upgrade lists: %w", err)
	}
	deltas := map[string]int64{}
	for i, ok := range in[:len(u.rows)] {
		if ok {
			deltas[feedCounters[u.feeds[i]]]++
		}
	}
	if err := u.s.countMarks(ctx, u.marks, deltas); err != nil {
		return fmt.Errorf("upgrade lists: %w", err)
	}
	u.pages, u.rows, u.feeds, u.marks = nil, nil, nil, nil
	return nil
}

// flushNewest writes the boxes' newest rows as setNewest would, with their items' bodies, once
// every entry is read.
func (u *upgrade) flushNewest(ctx context.Context) error {
	bodies, err := u.bodies(ctx, slices.Collect(maps.Values(u.newest)))
	if err != nil {
		return err
	}
	for pid, r := range u.newest {
		if b, ok := bodies[r.V.ItemID]; ok {
			r.V.Body = b
			u.newest[pid] = r
		}
	}
	if err := u.s.moveNewest(ctx, u.newest); err != nil {
		return fmt.Errorf("upgrade lists: %w", err)
	}
	return nil
}

// bodies reads the bodies of the items of rows, by item id (one find per thousand items).
func (u *upgrade) bodies(ctx context.Context, rows []keyed[Row]) (map[string]string, error) {
	var ids []string
	for _, r := range rows {
		if r.V.ItemID != "" {
			ids = append(ids, r.V.ItemID)
		}
	}
	its, err := mongox.FindIn[Item](ctx, u.s.c(Items), ids, options.Find().SetProjection(bson.D{{Key: "body", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("upgrade lists: %w", err)
	}
	bodies := make(map[string]string, len(its))
	for _, it := range its {
		bodies[it.ID] = it.Body
	}
	return bodies, nil
}
