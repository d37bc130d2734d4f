package network

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/feed-svc/internal/consumers"
	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

// TestUpgradeCarriesEarlierListsOver writes a store as the earlier release left it (mongox.Log
// lists in "lists": entries L#<n> with seq, key, at and v, heads and keys' markers beside them)
// and reads it through the new lists once UpgradeLists has run: the same rows, totals, stats,
// analytics, activity and box items, hidden items still hidden, and a second run or a
// redelivered event changes nothing.
func TestUpgradeCarriesEarlierListsOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testkit.Database(t, testkit.Backends(t), "feed")
	if err := mongox.EnsureIndexes(ctx, db, store.Indexes); err != nil {
		t.Fatal(err)
	}
	st := store.New(db)
	t0 := clock.Now().UTC().Truncate(time.Millisecond).Add(-time.Hour)
	at := func(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }
	for _, o := range []string{"a", "b"} {
		if err := st.AddObjects(ctx, store.Object{ID: o, Hash: "svc_" + o, Title: "T" + o, CreatedAt: at(0), HashAt: at(0)}); err != nil {
			t.Fatal(err)
		}
	}
	var old []any
	entry := func(list string, seq int64, key string, when time.Time, v any) {
		old = append(old, bson.D{{Key: "_id", Value: fmt.Sprintf("%s#%d", list, seq)}, {Key: "seq", Value: seq},
			{Key: "key", Value: key}, {Key: "at", Value: when}, {Key: "v", Value: v}})
		old = append(old, bson.D{{Key: "_id", Value: list + "@" + key}, {Key: "seq", Value: seq}})
	}
	createdA := store.Row{Kind: store.KindNewSvc, EventID: "ev_ca", BoxID: "a", Title: "Ta", At: at(1)}
	createdB := store.Row{Kind: store.KindNewSvc, EventID: "ev_cb", BoxID: "b", Title: "Tb", At: at(2)}
	item := func(id string, m int) (store.Row, store.Item) {
		it := store.Item{ID: id, FeedID: "a", Title: id, Body: "body of " + id, Tags: []string{"t"}, AuthorID: "b",
			AuthorHash: "svc_b", AuthorName: "Tb", PostedAt: at(m)}
		return store.Row{Kind: store.KindItem, EventID: "ev_" + id, BoxID: "a", ItemID: id, Title: id, Tags: it.Tags,
			AuthorID: "b", AuthorName: "Tb", At: at(m)}, it
	}
	row1, it1 := item("itm_1", 3)
	row2, it2 := item("itm_2", 4) // hidden
	for i, r := range []store.Row{createdA, createdB, row1, row2} {
		entry("global", int64(i+1), r.EventID, r.At, r)
		entry("activity", int64(i+1), r.EventID, r.At, store.Activity{Type: "x", BoxID: r.BoxID, At: r.At})
	}
	old = append(old, bson.D{{Key: "_id", Value: "global#head"}, {Key: "seq", Value: int64(4)}})
	entry("global:new_svc", 1, "ev_ca", at(1), createdA)
	entry("global:new_svc", 2, "ev_cb", at(2), createdB)
	entry("global:item", 1, "ev_itm_1", at(3), row1)
	entry("global:item", 2, "ev_itm_2", at(4), row2)
	entry("global:hidden", 1, "itm_2", at(5), bson.D{})
	entry("boxes:item", 1, "a", at(3), bson.D{})
	entry("stats:messages", 1, "ev_m1", at(3), bson.D{})
	entry("activity", 5, "ev_m1", at(3), store.Activity{Type: events.MessageCreated, BoxID: "a", At: at(3)})
	entry("stats:claims_verified", 1, "ev_v1", at(3), bson.D{})
	entry("stats:claims_verified", 2, "ev_v2", at(3), bson.D{})
	entry("stats:claims_lapsed", 1, "ev_l1", at(3), bson.D{})
	day := at(3).Format(time.DateOnly)
	entry("an:a:messages:"+day, 1, "ev_m1", at(3), bson.D{})
	entry("an:a:feed_items:"+day, 1, "ev_itm_1", at(3), bson.D{})
	entry("an:a:feed_items:"+day, 2, "ev_itm_2", at(4), bson.D{})
	entry("quota:a:others:"+day, 1, "itm_1", at(3), bson.D{}) // the quota upgrade's, left alone here
	for i, it := range []store.Item{it1, it2} {
		entry("items:a", int64(i+1), it.ID, it.PostedAt, it)
		if err := st.InsertItem(ctx, &it); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Collection(store.Lists).InsertMany(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := st.HideItem(ctx, store.Hide{ItemID: "itm_2", FeedID: "a", HiddenAt: at(5)}); err != nil {
		t.Fatal(err)
	}

	n, err := st.UpgradeLists(ctx)
	if err != nil || n != 25 {
		t.Fatalf("UpgradeLists = %d, %v; want the 25 entries read", n, err)
	}
	nw := &Network{Store: st}
	check := func(when string) {
		t.Helper()
		for _, c := range []struct {
			q     Query
			want  string
			total int64
		}{
			{Query{Limit: 10, Bodies: true}, "[itm_1:body of itm_1 New svc: Tb: New svc: Ta:]", 3},
			{Query{Limit: 10, Kind: KindItem}, "[itm_1:]", 1},
			{Query{Limit: 10, Kind: KindNewSvc}, "[New svc: Tb: New svc: Ta:]", 2},
			// a's newest row is its hidden item, which shows in no page, as before the upgrade
			{Query{Limit: 10, Unique: true}, "[New svc: Tb:]", 2},
		} {
			page, err := nw.Global(ctx, c.q)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range page.Items {
				got = append(got, r.Title+":"+r.Body)
			}
			if fmt.Sprint(got) != c.want || page.Total != c.total {
				t.Errorf("%s: %+v = %v (total %d), want %s (total %d)", when, c.q, got, page.Total, c.want, c.total)
			}
		}
		s, err := nw.Stats(ctx)
		if err != nil || s.IdentifierCount != 2 || s.MessageCount != 1 || s.VerifiedClaimsCount != 1 {
			t.Errorf("%s: stats = %+v, %v; want 2 objects, 1 message, 1 verified claim", when, s, err)
		}
		a, err := nw.Analytics(ctx, "a", 2)
		if err != nil || a.Totals.FeedItems != 2 || a.Totals.Messages != 1 {
			t.Errorf("%s: analytics = %+v, %v; want a's two items and one message", when, a.Totals, err)
		}
		act, err := nw.Activity(ctx, "", 10)
		if err != nil || len(act.Items) != 5 {
			t.Errorf("%s: activity = %+v, %v; want five entries", when, act, err)
		}
		items, _, err := st.ItemsPage(ctx, "a", "", 10)
		if err != nil || len(items) != 2 || items[0].ID != "itm_2" || !items[0].Hidden || items[0].Title != "" ||
			items[1].ID != "itm_1" || items[1].Hidden || items[1].Body != "body of itm_1" {
			t.Errorf("%s: a's items = %+v, %v; want itm_2 as a tombstone, then itm_1", when, items, err)
		}
	}
	check("after the upgrade")
	if n, err := st.UpgradeLists(ctx); err != nil || n != 0 {
		t.Fatalf("second UpgradeLists = %d, %v; want nothing done", n, err)
	}
	// A redelivered event of the earlier release counts nothing twice.
	p := events.MustNew(events.TopicMailbox, events.MessageCreated, "a", "svc_a", "", contract.MessageCreatedData{MessageID: "msg_1"})
	var ev events.Event
	if err := json.Unmarshal([]byte(p.Payload), &ev); err != nil {
		t.Fatal(err)
	}
	ev.ID, ev.Time = "ev_m1", at(3).Format(time.RFC3339Nano)
	if err := (&consumers.Network{Store: st}).Handle(ctx, []events.Event{ev}); err != nil {
		t.Fatal(err)
	}
	check("after a redelivery")
}
