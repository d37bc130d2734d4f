package network

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/svcdev/svc/feed-svc/internal/consumers"
	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// TestGlobalFeedPagesFromItsLists feeds events to the consumer, as the broker would, and reads
// the network's feed page by page: rows newest first, unique boxes, totals from the counters,
// private boxes and private authors nowhere, hidden items left out.
func TestGlobalFeedPagesFromItsLists(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testkit.Database(t, testkit.Backends(t), "feed")
	if err := mongox.EnsureIndexes(ctx, db, store.Indexes); err != nil {
		t.Fatal(err)
	}
	st := store.New(db)
	c := &consumers.Network{Store: st}
	handle := func(topic, typ, objectID string, data any) {
		t.Helper()
		p := events.MustNew(topic, typ, objectID, "svc_"+objectID, "", data)
		var ev events.Event
		if err := json.Unmarshal([]byte(p.Payload), &ev); err != nil {
			t.Fatal(err)
		}
		if err := c.Handle(ctx, []events.Event{ev}); err != nil {
			t.Fatal(err)
		}
		if err := c.Handle(ctx, []events.Event{ev}); err != nil { // redelivered: no change
			t.Fatal(err)
		}
	}
	for _, o := range []struct{ id, vis string }{{"a", "public"}, {"b", "public"}, {"p", "private"}} {
		handle(events.TopicIdentity, events.ObjectCreated, o.id,
			contract.ObjectCreatedData{Object: contract.Object{ObjectID: o.id, Hash: "svc_" + o.id, Visibility: contract.Visibility(o.vis), Title: "T" + o.id}})
	}
	author := "svc_b"
	item := func(box, id, authorID string, authorHash *string) {
		handle(events.TopicFeed, events.FeedItemPublished, box, contract.FeedItemPublishedData{ItemID: id, Title: id,
			AuthorObjectID: authorID, AuthorHash: authorHash, AuthorName: "by " + authorID, PostedAt: time.Now().UTC().Format(time.RFC3339Nano)})
	}
	for i := range 5 {
		item("a", fmt.Sprint("itm_a", i), "b", &author)
	}
	item("a", "itm_private_author", "", nil)
	item("p", "itm_private_box", "b", &author)
	if err := st.HideItem(ctx, store.Hide{ItemID: "itm_a0", FeedID: "a"}); err != nil {
		t.Fatal(err)
	}
	listed, _, err := st.ItemsPage(ctx, "a", "", 10)
	if err != nil || len(listed) != 6 || listed[5].ID != "itm_a0" {
		t.Fatalf("a's items: %+v, %v", listed, err)
	}
	if err := st.HideRows(ctx, &listed[5].Item); err != nil {
		t.Fatal(err)
	}
	n := &Network{Store: st}
	var titles []string
	var total int64
	for before, pages := "", 0; pages < 10; pages++ {
		page, err := n.Global(ctx, Query{Limit: 2, Before: before})
		if err != nil {
			t.Fatal(err)
		}
		total = page.Total
		for _, r := range page.Items {
			titles = append(titles, r.Title)
			if r.Who == nil || (r.Kind == KindItem && (r.Who.Svc == nil || *r.Who.Svc != "svc_b")) {
				t.Errorf("row %+v names its author wrongly", r)
			}
		}
		if before = page.Next; before == "" {
			break
		}
	}
	if want := "[itm_a4 itm_a3 itm_a2 itm_a1 New svc: Tb New svc: Ta]"; fmt.Sprint(titles) != want || total != 6 {
		t.Errorf("paged %v (total %d), want %s (total 6)", titles, total, want)
	}
	unique, err := n.Global(ctx, Query{Limit: 10, Unique: true})
	if err != nil || len(unique.Items) != 2 || unique.Items[0].Title != "itm_a4" || unique.Total != 2 {
		t.Errorf("unique = %+v, %v; want a's newest item and b's creation", unique, err)
	}
	s, err := n.Stats(ctx)
	if err != nil || s.IdentifierCount != 2 {
		t.Errorf("stats = %+v, %v; want the two public objects", s, err)
	}
	act, err := n.Activity(ctx, "", 50)
	if err != nil || len(act.Items) != 2+6 {
		t.Errorf("activity = %d entries (%v), want two creations and six items of the public box", len(act.Items), err)
	}
}
