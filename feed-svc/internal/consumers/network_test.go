package consumers

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

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
