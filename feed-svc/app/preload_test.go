package app_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/feed-svc/app"
	"github.com/svcdev/svc/feed-svc/internal/consumers"
	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// preloadEvents are objects (one private), messages and items of public and private authors,
// each object's events in order.
func preloadEvents(t *testing.T) []events.Event {
	t.Helper()
	ev := func(topic, typ, obj string, data any) events.Event {
		return testkit.Consumed(t, events.MustNew(topic, typ, obj, "svc_"+obj, "", data))
	}
	var out []events.Event
	for _, o := range []string{"a", "b", "priv"} {
		vis := "public"
		if o == "priv" {
			vis = "private"
		}
		out = append(out, ev(events.TopicIdentity, events.ObjectCreated, o,
			contract.ObjectCreatedData{Object: contract.Object{ObjectID: o, Hash: "svc_" + o, Visibility: contract.Visibility(vis), Title: "Box " + o}}))
	}
	author := "svc_a"
	for i := range 30 {
		box := []string{"a", "b", "priv"}[i%3]
		if i%4 == 0 {
			out = append(out, ev(events.TopicMailbox, events.MessageCreated, box, contract.MessageCreatedData{MessageID: fmt.Sprint("msg_", i)}))
			continue
		}
		d := contract.FeedItemPublishedData{ItemID: fmt.Sprint("itm_", i), Title: fmt.Sprint("item ", i), Body: "body",
			Tags: []string{"t"}, AuthorObjectID: "a", AuthorHash: &author, AuthorName: "Box a",
			PostedAt: time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC).Format(time.RFC3339Nano)}
		if i%5 == 0 {
			d.AuthorObjectID, d.AuthorHash, d.AuthorName = "", nil, ""
		}
		out = append(out, ev(events.TopicFeed, events.FeedItemPublished, box, d))
	}
	return out
}

func feedDB(t *testing.T) *mongo.Database {
	t.Helper()
	db := testkit.Database(t, testkit.Backends(t), "feed")
	if err := mongox.EnsureIndexes(context.Background(), db, store.Indexes); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestPreloadPagesLikeTheConsumer: the same events projected by the consumer into one store and
// preloaded in chunks into another leave the same documents under the same keys (lists, boxes'
// newest rows, marks, analytics), the same counts and item records; and the consumer, handed the
// preloaded events again, adds nothing.
func TestPreloadPagesLikeTheConsumer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	evs := preloadEvents(t)
	consumed, loaded := feedDB(t), feedDB(t)
	if err := (&consumers.Network{Store: store.New(consumed)}).Handle(ctx, evs); err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs { // publishing's record of each item, which Preload writes as well
		var d contract.FeedItemPublishedData
		if ev.Type == events.FeedItemPublished && ev.Decode(&d) == nil {
			posted, _ := time.Parse(time.RFC3339Nano, d.PostedAt)
			it := store.Item{ID: d.ItemID, FeedID: ev.ObjectID, Title: d.Title, Body: d.Body, Tags: d.Tags, PostedAt: posted,
				AuthorID: d.AuthorObjectID, AuthorName: d.AuthorName, AuthorPrivate: d.AuthorHash == nil}
			if d.AuthorHash != nil {
				it.AuthorHash = *d.AuthorHash
			}
			if err := store.New(consumed).InsertItem(ctx, &it); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := app.NewPreloader(loaded).Load(ctx, evs[:17]); err != nil { // two loads
		t.Fatal(err)
	}
	if err := app.Preload(ctx, loaded, evs[17:]); err != nil {
		t.Fatal(err)
	}
	compare := func(when string) {
		t.Helper()
		// Every list document and mark alike, key by key (the counters' changes are placed
		// differently: one per batch the projection is handed).
		for _, coll := range []string{store.Pages, store.Counts} {
			want, err := mongox.FindAll[bson.Raw](ctx, consumed.Collection(coll), bson.D{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := mongox.FindAll[bson.Raw](ctx, loaded.Collection(coll), bson.D{})
			if err != nil {
				t.Fatal(err)
			}
			keep := func(docs []bson.Raw) map[string]bson.Raw {
				out := map[string]bson.Raw{}
				for _, d := range docs {
					id := d.Lookup("_id").StringValue()
					if !strings.HasPrefix(id, "c|") {
						out[id] = d
					}
				}
				return out
			}
			w, g := keep(want), keep(got)
			if len(w) < 10 {
				t.Fatalf("%s: the consumer wrote %d documents; the test does not test", coll, len(w))
			}
			if len(g) != len(w) {
				t.Fatalf("%s %s: %d documents preloaded, %d consumed", when, coll, len(g), len(w))
			}
			for id, d := range w {
				if !bytes.Equal(g[id], d) {
					t.Fatalf("%s %s: %s preloaded %v, consumed %v", when, coll, id, g[id], d)
				}
			}
		}
		for _, c := range []string{store.CounterFeed, store.CounterItems, store.CounterCreated, store.CounterBoxesWithItems, store.CounterMessages} {
			want, errW := store.New(consumed).Counter(ctx, c)
			got, errG := store.New(loaded).Counter(ctx, c)
			if errW != nil || errG != nil || got != want || want == 0 {
				t.Fatalf("%s counter %s: preloaded %d %v, consumed %d %v", when, c, got, errG, want, errW)
			}
		}
	}
	compare("after the preload")
	stC, stL := store.New(consumed), store.New(loaded)
	for id, box := range map[string]string{"itm_1": "b", "itm_3": "a", "itm_5": "priv"} {
		a, errA := stC.Item(ctx, box, id)
		b, errB := stL.Item(ctx, box, id)
		if errA != nil || errB != nil || fmt.Sprint(*a) != fmt.Sprint(*b) {
			t.Fatalf("item %s: consumed %+v %v, preloaded %+v %v", id, a, errA, b, errB)
		}
	}
	if o, err := stL.Object(ctx, "priv"); err != nil || !o.Private() {
		t.Fatalf("preloaded object: %+v %v", o, err)
	}
	// The consumer, handed the preloaded events again, finds every key appended already.
	if err := (&consumers.Network{Store: store.New(loaded)}).Handle(ctx, evs); err != nil {
		t.Fatal(err)
	}
	compare("after a redelivery")
}
