package events_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

type collector struct {
	mu   sync.Mutex
	seen map[string]int
}

func (c *collector) handle(_ context.Context, ev events.Event) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen[ev.ID]++
	return nil
}

func (c *collector) count(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen[id]
}

// TestOutboxRelayAndConsumer writes events in documents' outboxes, one announced to the relay and
// one left for the sweep, publishes a duplicate, and checks that the consumer handles each event
// exactly once and that the outboxes are emptied.
func TestOutboxRelayAndConsumer(t *testing.T) {
	t.Parallel()
	env := testkit.Backends(t)
	db := testkit.Database(t, env, "events")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := testkit.Logger(t)

	prod := events.NewProducer(env.Brokers, env.Name+".")
	defer prod.Close()
	relay := events.NewRelay(db, prod, log, "things")
	col := &collector{seen: map[string]int{}}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = relay.Run(ctx) }()
	go func() {
		defer wg.Done()
		_ = events.Consume(ctx, events.ConsumerConfig{
			Brokers: env.Brokers, Prefix: env.Name + ".", GroupID: "test", Topics: []string{events.TopicIdentity},
			Processed: db.Collection("processed_events"), Handler: col.handle, Log: log,
		})
	}()

	fast := events.MustNew(events.TopicIdentity, events.ObjectCreated, "obj_1", "svc_a", "req_1", map[string]string{"k": "v"})
	swept := events.MustNew(events.TopicIdentity, events.ObjectCreated, "obj_2", "svc_b", "req_2", map[string]string{"k": "v"})
	for id, p := range map[string]events.Pending{"a": fast, "b": swept} {
		if _, err := db.Collection("things").InsertOne(ctx, bson.M{"_id": id, events.OutboxField: []events.Pending{p}}); err != nil {
			t.Fatal(err)
		}
	}
	relay.Enqueue("things", "a", fast)
	if err := prod.Publish(ctx, fast); err != nil { // a duplicate delivery
		t.Fatal(err)
	}

	deadline := time.Now().Add(20 * time.Second)
	for col.count(fast.ID) == 0 || col.count(swept.ID) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("events not consumed: fast=%d swept=%d", col.count(fast.ID), col.count(swept.ID))
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // room for a wrongly handled duplicate to show
	if n := col.count(fast.ID); n != 1 {
		t.Errorf("event delivered twice was handled %d times, want 1", n)
	}
	for _, id := range []string{"a", "b"} {
		var doc bson.M
		if err := db.Collection("things").FindOne(ctx, bson.M{"_id": id}).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		if ob, ok := doc[events.OutboxField].(bson.A); !ok || len(ob) != 0 {
			t.Errorf("document %s still has outbox %v after relay", id, doc[events.OutboxField])
		}
	}
	cancel()
	wg.Wait()
}
