package consumers

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/feed-svc/internal/network"
	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// envelope builds the event a service would publish.
func envelope(t *testing.T, topic, typ, objectID, hash string, data any) events.Event {
	t.Helper()
	return testkit.Consumed(t, events.MustNew(topic, typ, objectID, hash, "", data))
}

// createPubAndPriv projects the creation of a public object "pub" and a private one "priv".
func createPubAndPriv(t *testing.T, n *Network) {
	t.Helper()
	for _, o := range []contract.Object{
		{ObjectID: "pub", Hash: "svc_pub", Visibility: "public", Title: "Pub"},
		{ObjectID: "priv", Hash: "svc_priv", Visibility: "private"},
	} {
		ev := envelope(t, events.TopicIdentity, events.ObjectCreated, o.ObjectID, o.Hash, contract.ObjectCreatedData{Object: o})
		if err := n.Handle(context.Background(), []events.Event{ev}); err != nil {
			t.Fatal(err)
		}
	}
}

// messagesToPubAndPriv are n messages, every fourth to "priv", the others to "pub".
func messagesToPubAndPriv(t *testing.T, n int) []events.Event {
	t.Helper()
	var msgs []events.Event
	for i := range n {
		to := "pub"
		if i%4 == 0 {
			to = "priv"
		}
		msgs = append(msgs, envelope(t, events.TopicMailbox, events.MessageCreated, to, "svc_"+to,
			contract.MessageCreatedData{MessageID: fmt.Sprint("msg_", i)}))
	}
	return msgs
}

func TestProjectionCountsExactlyAcrossPartitionsAndRedelivery(t *testing.T) {
	t.Parallel()
	env := testkit.Backends(t)
	db := testkit.Database(t, env, "feed")
	ctx := context.Background()
	if err := mongox.EnsureIndexes(ctx, db, store.Indexes); err != nil {
		t.Fatal(err)
	}
	st := store.New(db)
	n := &Network{Store: st}
	createPubAndPriv(t, n)
	msgs := messagesToPubAndPriv(t, 40)
	// Partitions are handled concurrently, each one event at a time; every event is then handled
	// again, alone and in overlapping batches (a batch redelivered after a partial failure).
	// Two replicas, each with its own newest counter changes in memory, take two partitions each.
	replicas := []*Network{n, {Store: store.New(db)}}
	var wg sync.WaitGroup
	for p := range 4 {
		wg.Go(func() {
			for i := p; i < len(msgs); i += 4 {
				if err := replicas[p%2].Handle(ctx, msgs[i:i+1]); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for _, b := range [][]events.Event{msgs[:25], msgs[15:], msgs[7:9]} {
		if err := n.Handle(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	s, err := (&network.Network{Store: st}).Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.IdentifierCount != 1 || s.MessageCount != 30 {
		t.Errorf("stats = %+v, want one public object and its 30 messages", s)
	}
}

// TestMessagesCountedOnceInBatches: a partition's messages, handled in batches that overlap (a
// batch redelivered after a partial failure), count once each in their recipients' analytics,
// the private recipient's too, and once each in the network's message count for the public one.
func TestMessagesCountedOnceInBatches(t *testing.T) {
	t.Parallel()
	db := testkit.Database(t, testkit.Backends(t), "feed")
	ctx := context.Background()
	if err := mongox.EnsureIndexes(ctx, db, store.Indexes); err != nil {
		t.Fatal(err)
	}
	st := store.New(db)
	n := &Network{Store: st}
	msgs := []events.Event{envelope(t, events.TopicMailbox, events.MessageCreated, "pub", "svc_pub",
		contract.MessageCreatedData{MessageID: "msg_early"})}
	if err := n.Handle(ctx, msgs); err == nil {
		t.Fatal("a message to an object whose creation is not projected was taken")
	}
	createPubAndPriv(t, n)
	msgs = append(msgs, messagesToPubAndPriv(t, 19)...)
	for _, b := range [][]events.Event{msgs[:12], msgs[5:], msgs, msgs[3:4]} {
		if err := n.Handle(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	for obj, want := range map[string]int64{"pub": 15, "priv": 5} {
		days, err := st.Daily(ctx, obj, time.Now().AddDate(0, 0, -1))
		if err != nil {
			t.Fatal(err)
		}
		var got int64
		for _, kinds := range days {
			got += kinds[store.CountMessages]
		}
		if got != want {
			t.Errorf("analytics of %s count %d messages, want %d", obj, got, want)
		}
	}
	s, err := (&network.Network{Store: st}).Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.MessageCount != 15 {
		t.Errorf("message count %d, want the public object's 15 messages", s.MessageCount)
	}
	acts, _, err := st.ActivityPage(ctx, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	messages := 0
	for _, a := range acts {
		if a.Type == events.MessageCreated {
			if a.BoxID != "pub" {
				t.Errorf("activity shows a message to %s", a.BoxID)
			}
			messages++
		}
	}
	if messages != 15 {
		t.Errorf("activity shows %d messages, want 15", messages)
	}
}

// TestABurstOfNewThreadsCostsAFewCommands: a fetch of new-thread sends to many recipients (each a
// thread.created and a message.created, keyed by the recipient) is counted in a few commands
// whatever the number of sends and recipients, and exactly: handled again, alone and in part, it
// changes no count.
func TestABurstOfNewThreadsCostsAFewCommands(t *testing.T) {
	t.Parallel()
	env := testkit.Backends(t)
	var commands atomic.Int64
	client, err := mongo.Connect(options.Client().ApplyURI(env.MongoURI).SetMonitor(&event.CommandMonitor{
		Started: func(context.Context, *event.CommandStartedEvent) { commands.Add(1) }}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	db := client.Database(env.Name + "_feed")
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	ctx := context.Background()
	if err := mongox.EnsureIndexes(ctx, db, store.Indexes); err != nil {
		t.Fatal(err)
	}
	st := store.New(db)
	n := &Network{Store: st}
	const recipients, sends = 16, 96
	var burst []events.Event
	for i := range recipients {
		id := fmt.Sprint("obj", i)
		ev := envelope(t, events.TopicIdentity, events.ObjectCreated, id, "svc_"+id,
			contract.ObjectCreatedData{Object: contract.Object{ObjectID: id, Hash: "svc_" + id, Visibility: "public"}})
		if err := n.Handle(ctx, []events.Event{ev}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range sends {
		to := fmt.Sprint("obj", i%recipients)
		burst = append(burst,
			envelope(t, events.TopicMailbox, events.ThreadCreated, to, "svc_"+to, contract.ThreadCreatedData{ThreadID: fmt.Sprint("thr_", i)}),
			envelope(t, events.TopicMailbox, events.MessageCreated, to, "svc_"+to, contract.MessageCreatedData{MessageID: fmt.Sprint("msg_", i)}))
	}
	// The first send reads what a running projection knows: the network's message count.
	if err := n.Handle(ctx, burst[:2]); err != nil {
		t.Fatal(err)
	}
	before := commands.Load()
	if err := n.Handle(ctx, burst[2:]); err != nil {
		t.Fatal(err)
	}
	// The other recipients' visibility (one find), the activity entries (one insert), the
	// analytics and the network's message count (one bulk write).
	if got := commands.Load() - before; got > 3 {
		t.Errorf("a burst of %d sends to %d recipients cost %d store commands, want 3", sends-1, recipients, got)
	}
	for _, b := range [][]events.Event{burst[10:11], burst[:50], burst[41:]} {
		if err := n.Handle(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	var total int64
	for i := range recipients {
		days, err := st.Daily(ctx, fmt.Sprint("obj", i), time.Now().AddDate(0, 0, -1))
		if err != nil {
			t.Fatal(err)
		}
		for _, kinds := range days {
			if got := kinds[store.CountMessages]; got != sends/recipients {
				t.Errorf("obj%d's analytics count %d messages, want %d", i, got, sends/recipients)
			}
			total += kinds[store.CountMessages]
		}
	}
	s, err := (&network.Network{Store: st}).Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s.MessageCount != sends || total != sends {
		t.Errorf("message count %d, analytics %d, want %d", s.MessageCount, total, sends)
	}
}

// networkEvents are creations (two public objects, one private), items in each box (one by a
// private author, several in one box so that its newest row moves), a hash change, a context
// update, a verified claim and messages, each object's in order.
func networkEvents(t *testing.T) []events.Event {
	t.Helper()
	var out []events.Event
	for _, o := range []contract.Object{
		{ObjectID: "pub", Hash: "svc_pub", Visibility: "public", Title: "Pub"},
		{ObjectID: "pub2", Hash: "svc_pub2", Visibility: "public", Title: "Pub 2"},
		{ObjectID: "priv", Hash: "svc_priv", Visibility: "private"},
	} {
		out = append(out, envelope(t, events.TopicIdentity, events.ObjectCreated, o.ObjectID, o.Hash, contract.ObjectCreatedData{Object: o}))
	}
	author := "svc_pub"
	for i := range 12 {
		box := []string{"pub", "pub2", "priv", "pub2"}[i%4]
		d := contract.FeedItemPublishedData{ItemID: fmt.Sprint("itm_", i), Title: fmt.Sprint("item ", i), Body: "body",
			Tags: []string{"t"}, AuthorObjectID: "pub", AuthorHash: &author, AuthorName: "Pub",
			PostedAt: time.Date(2026, 1, 1, 0, i, 0, 0, time.UTC).Format(time.RFC3339Nano)}
		if i == 5 {
			d.AuthorObjectID, d.AuthorHash, d.AuthorName = "", nil, ""
		}
		out = append(out, envelope(t, events.TopicFeed, events.FeedItemPublished, box, "svc_"+box, d))
		if i%3 == 0 {
			out = append(out, envelope(t, events.TopicMailbox, events.MessageCreated, box, "svc_"+box,
				contract.MessageCreatedData{MessageID: fmt.Sprint("msg_", i)}))
		}
	}
	return append(out,
		envelope(t, events.TopicIdentity, events.ObjectHashChanged, "pub2", "svc_pub2b", contract.HashChangedData{Hash: "svc_pub2b"}),
		envelope(t, events.TopicContext, events.ContextUpdated, "pub", "svc_pub", contract.ContextUpdatedData{Title: "Pub's profile", Version: 2}),
		envelope(t, events.TopicClaims, events.ClaimVerified, "pub", "svc_pub", contract.ClaimVerifiedData{ClaimID: "clm_1", ProofType: "dns",
			ClaimedTarget: "example.com", VerifiedAt: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC).Format(time.RFC3339Nano)}))
}

// TestABatchProjectsAsOneEventAtATime: the same events, handled one at a time into one store and
// as one batch into another (after an item of one box was hidden before its event came, in both),
// leave the same documents under the same keys (lists, boxes' newest rows, marks, analytics,
// objects) and the same counts; handled again, one at a time and in overlapping batches, the
// same again.
func TestABatchProjectsAsOneEventAtATime(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	evs := networkEvents(t)
	env := testkit.Backends(t)
	alone, batched := testkit.Database(t, env, "alone"), testkit.Database(t, env, "batched")
	for _, db := range []*mongo.Database{alone, batched} {
		if err := mongox.EnsureIndexes(ctx, db, store.Indexes); err != nil {
			t.Fatal(err)
		}
		// itm_3 (pub2's) is hidden before its event is projected, as a hide does.
		st := store.New(db)
		it := &store.Item{ID: "itm_3", FeedID: "pub2", PostedAt: time.Date(2026, 1, 1, 0, 3, 0, 0, time.UTC)}
		if err := st.HideItem(ctx, store.Hide{ItemID: it.ID, FeedID: it.FeedID, HiddenAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if err := st.Tombstone(ctx, it); err != nil {
			t.Fatal(err)
		}
		if err := st.HideRows(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	one := &Network{Store: store.New(alone)}
	for _, ev := range evs {
		if err := one.Handle(ctx, []events.Event{ev}); err != nil {
			t.Fatal(err)
		}
	}
	all := &Network{Store: store.New(batched)}
	if err := all.Handle(ctx, evs); err != nil {
		t.Fatal(err)
	}
	compare := func(when string) {
		t.Helper()
		for _, coll := range []string{store.Pages, store.Counts, store.Objects, store.Titles, store.Claims} {
			want, got := documents(t, alone, coll), documents(t, batched, coll)
			if len(want) == 0 || len(got) != len(want) {
				t.Fatalf("%s %s: %d documents batched, %d one at a time", when, coll, len(got), len(want))
			}
			for id, d := range want {
				if g := got[id]; g == nil || g.String() != d.String() {
					t.Errorf("%s %s %s: batched %v, one at a time %v", when, coll, id, g, d)
				}
			}
		}
		for _, c := range []string{store.CounterFeed, store.CounterItems, store.CounterCreated, store.CounterBoxesWithItems,
			store.CounterMessages, store.CounterClaims} {
			want, errW := store.New(alone).Counter(ctx, c)
			got, errG := store.New(batched).Counter(ctx, c)
			if errW != nil || errG != nil || got != want || want == 0 {
				t.Errorf("%s counter %s: batched %d %v, one at a time %d %v", when, c, got, errG, want, errW)
			}
		}
	}
	compare("handled once")
	counters := func(db *mongo.Database) map[string]int64 {
		out := map[string]int64{}
		for _, c := range []string{store.CounterFeed, store.CounterItems, store.CounterBoxesWithItems} {
			n, err := store.New(db).Counter(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			out[c] = n
		}
		return out
	}
	once := counters(alone)
	for _, ev := range evs {
		if err := one.Handle(ctx, []events.Event{ev}); err != nil {
			t.Fatal(err)
		}
	}
	// Handled again once each, in overlapping batches: nothing changes, the hidden item's rows
	// are not added back and counted again.
	for _, b := range [][]events.Event{evs[:12], evs[9:]} {
		if err := all.Handle(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	compare("handled again")
	for _, db := range []*mongo.Database{alone, batched} {
		if got := counters(db); !maps.Equal(got, once) {
			t.Errorf("counters after a redelivery %v, handled once %v", got, once)
		}
	}
}

// documents are coll's documents by _id, but the network counters' changes (c|…), which are
// placed one per batch a projection is handed.
func documents(t *testing.T, db *mongo.Database, coll string) map[string]bson.Raw {
	t.Helper()
	docs, err := mongox.FindAll[bson.Raw](context.Background(), db.Collection(coll), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bson.Raw{}
	for _, d := range docs {
		if id := d.Lookup("_id").StringValue(); !strings.HasPrefix(id, "c|") {
			out[id] = d
		}
	}
	return out
}

// TestABurstOfItemsCostsAFewCommands: a fetch of items published to many boxes is projected in
// a few commands whatever the number of items and boxes, and exactly: every item is listed in
// its box and, newest per box, in the unique lists.
func TestABurstOfItemsCostsAFewCommands(t *testing.T) {
	t.Parallel()
	env := testkit.Backends(t)
	var commands atomic.Int64
	client, db, err := mongox.Connect(context.Background(), env.MongoURI, env.Name+"_feed", &event.CommandMonitor{
		Started: func(context.Context, *event.CommandStartedEvent) { commands.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Drop(context.Background()); _ = client.Disconnect(context.Background()) })
	ctx := context.Background()
	if err := mongox.EnsureIndexes(ctx, db, store.Indexes); err != nil {
		t.Fatal(err)
	}
	st := store.New(db)
	n := &Network{Store: st}
	const boxes, items = 16, 96
	var creations, burst []events.Event
	for i := range boxes {
		id := fmt.Sprint("obj", i)
		creations = append(creations, envelope(t, events.TopicIdentity, events.ObjectCreated, id, "svc_"+id,
			contract.ObjectCreatedData{Object: contract.Object{ObjectID: id, Hash: "svc_" + id, Visibility: "public"}}))
	}
	if err := n.Handle(ctx, creations); err != nil {
		t.Fatal(err)
	}
	author := "svc_obj0"
	for i := range items {
		box := fmt.Sprint("obj", i%boxes)
		burst = append(burst, envelope(t, events.TopicFeed, events.FeedItemPublished, box, "svc_"+box, contract.FeedItemPublishedData{
			ItemID: fmt.Sprint("itm_", i), Title: fmt.Sprint("item ", i), Tags: []string{}, AuthorObjectID: "obj0", AuthorHash: &author,
			PostedAt: time.Date(2026, 1, 1, 0, 0, i, 0, time.UTC).Format(time.RFC3339Nano)}))
	}
	// The first item reads what a running projection knows: the counters' newest changes.
	if err := n.Handle(ctx, burst[:1]); err != nil {
		t.Fatal(err)
	}
	before := commands.Load()
	if err := n.Handle(ctx, burst[1:]); err != nil {
		t.Fatal(err)
	}
	// The box entries, the rows, their counts, the newest rows (their pointers read, the rows
	// inserted, the pointers replaced, the creations' rows deleted), the boxes-with-items marks
	// and count, the hidden checks before and after, the activity entries and the analytics.
	got := commands.Load() - before
	t.Logf("a burst of %d items to %d boxes: %d store commands", items-1, boxes, got)
	if got > 13 {
		t.Errorf("a burst of %d items to %d boxes cost %d store commands, want at most 13", items-1, boxes, got)
	}
	if err := n.Handle(ctx, burst[40:70]); err != nil { // handled again in part: nothing changes
		t.Fatal(err)
	}
	for c, want := range map[string]int64{store.CounterItems: items, store.CounterFeed: items + boxes, store.CounterBoxesWithItems: boxes} {
		if got, err := st.Counter(ctx, c); err != nil || got != want {
			t.Errorf("counter %s = %d %v, want %d", c, got, err, want)
		}
	}
	rows, _, err := st.Rows(ctx, store.FeedItems, true, false, "", 100)
	if err != nil || len(rows) != boxes {
		t.Fatalf("unique item rows: %d %v, want one a box", len(rows), err)
	}
	for _, r := range rows {
		var box int
		fmt.Sscanf(r.BoxID, "obj%d", &box)
		if want := fmt.Sprint("itm_", items-boxes+box); r.ItemID != want {
			t.Errorf("%s's newest row is %s, want %s", r.BoxID, r.ItemID, want)
		}
	}
}
