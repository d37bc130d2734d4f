package events_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/testkit"
)

// consumerFixture runs consumers of one group over a test database and topic prefix.
type consumerFixture struct {
	env  testkit.Env
	db   *mongo.Database
	prod *events.Producer
	cfg  events.ConsumerConfig
}

func newConsumerFixture(t testing.TB, h events.Handler) *consumerFixture {
	t.Helper()
	env := testkit.Backends(t)
	db := testkit.Database(t, env, "consumer")
	prod := events.NewProducer(env.Brokers, env.Name+".")
	t.Cleanup(func() { _ = prod.Close() })
	return &consumerFixture{env: env, db: db, prod: prod, cfg: events.ConsumerConfig{
		Brokers: env.Brokers, Prefix: env.Name + ".", GroupID: "test", Topics: []string{events.TopicClaims},
		Processed: db.Collection("processed_events"), Dead: db.Collection(events.DeadLetterCollection),
		Handler: h, Log: testkit.Logger(t),
		RetryMin: 50 * time.Millisecond, RetryMax: time.Second, RetryFor: 5 * time.Minute,
	}}
}

// start runs a consumer until the returned stop is called; stop waits for it to end.
func (f *consumerFixture) start(t testing.TB) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- events.Consume(ctx, f.cfg) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("consumer: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func (f *consumerFixture) publish(t *testing.T, key string) events.Pending {
	t.Helper()
	ev := events.MustNew(events.TopicClaims, events.ClaimVerified, key, "svc_"+key, "req_test", map[string]string{"key": key})
	if err := f.prod.Publish(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	return ev
}

// handled counts the successful handlings of each event and the attempts of each.
type handled struct {
	mu       sync.Mutex
	done     map[string]int
	attempts map[string]int
	doneAt   map[string]time.Time
}

func newHandled() *handled {
	return &handled{done: map[string]int{}, attempts: map[string]int{}, doneAt: map[string]time.Time{}}
}

// record counts an attempt at ev and, when err is nil, its handling.
func (h *handled) record(ev events.Event, err error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.attempts[ev.ID]++
	if err == nil {
		h.done[ev.ID]++
		h.doneAt[ev.ID] = time.Now()
	}
	return err
}

func (h *handled) get(id string) (done, attempts int, at time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.done[id], h.attempts[id], h.doneAt[id]
}

func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestConsumerRedeliversAfterStopMidHandler stops a consumer while its handler runs: the event
// is not committed, and the restarted consumer handles it.
func TestConsumerRedeliversAfterStopMidHandler(t *testing.T) {
	t.Parallel()
	h := newHandled()
	started := make(chan struct{})
	var first sync.Once
	f := newConsumerFixture(t, func(ctx context.Context, ev events.Event) error {
		interrupted := false
		first.Do(func() {
			close(started)
			<-ctx.Done() // the handler is still at work when the shutdown comes
			interrupted = true
		})
		if interrupted {
			return h.record(ev, ctx.Err())
		}
		return h.record(ev, nil)
	})
	ev := f.publish(t, "obj_1")
	stop := f.start(t)
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		t.Fatal("the handler never started")
	}
	stop()
	if done, _, _ := h.get(ev.ID); done != 0 {
		t.Fatalf("the interrupted event counts as handled %d times", done)
	}
	f.start(t)
	eventually(t, 30*time.Second, "the restarted consumer handles the event", func() bool {
		done, _, _ := h.get(ev.ID)
		return done == 1
	})
}

// partitionKeys returns two object ids whose events land on different partitions.
func partitionKeys(t *testing.T, env testkit.Env) (string, string) {
	t.Helper()
	conn, err := kafka.Dial("tcp", env.Brokers[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	parts, err := conn.ReadPartitions(env.Name + "." + events.TopicClaims)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int, len(parts))
	for i := range parts {
		ids[i] = i
	}
	var h kafka.Hash
	a := "obj_a"
	pa := h.Balance(kafka.Message{Key: []byte(a)}, ids...)
	for i := range 100 {
		b := fmt.Sprintf("obj_b%d", i)
		if h.Balance(kafka.Message{Key: []byte(b)}, ids...) != pa {
			return a, b
		}
	}
	t.Fatalf("no two keys on different partitions among %d partitions", len(parts))
	return "", ""
}

// TestConsumerRetriesPastTheOldGiveUp fails a handler for 20 s, longer than the 8 attempts
// (about 13 s) after which events used to be dropped: the event is handled once it recovers,
// is not dead-lettered, and an event of another partition is handled meanwhile.
func TestConsumerRetriesPastTheOldGiveUp(t *testing.T) {
	t.Parallel()
	h := newHandled()
	var failing struct {
		sync.Mutex
		id    string
		until time.Time
	}
	f := newConsumerFixture(t, func(ctx context.Context, ev events.Event) error {
		failing.Lock()
		fail := ev.ID == failing.id && time.Now().Before(failing.until)
		failing.Unlock()
		if fail {
			return h.record(ev, errors.New("the store is unavailable"))
		}
		return h.record(ev, nil)
	})
	f.publish(t, "warm_up") // creates the topic, so that its partitions can be read
	keyA, keyB := partitionKeys(t, f.env)
	a := events.MustNew(events.TopicClaims, events.ClaimVerified, keyA, "svc_a", "req_a", map[string]string{})
	const failFor = 20 * time.Second
	failing.Lock()
	failing.id, failing.until = a.ID, time.Now().Add(failFor)
	failing.Unlock()
	if err := f.prod.Publish(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	b := f.publish(t, keyB)
	f.start(t)
	eventually(t, 30*time.Second, "the event of the other partition is handled", func() bool {
		done, _, _ := h.get(b.ID)
		return done == 1
	})
	if done, _, _ := h.get(a.ID); done != 0 {
		t.Fatal("the failing event was handled while its handler still failed")
	}
	eventually(t, failFor+30*time.Second, "the failing event is handled after recovery", func() bool {
		done, _, _ := h.get(a.ID)
		return done == 1
	})
	_, attempts, at := h.get(a.ID)
	if failing.until.After(at) {
		t.Errorf("handled at %v, before the failure ended at %v", at, failing.until)
	}
	if attempts <= 8 {
		t.Errorf("the failing event was attempted %d times, want more than the old limit of 8", attempts)
	}
	if n, _ := f.cfg.Dead.CountDocuments(context.Background(), bson.D{}); n != 0 {
		t.Errorf("%d dead letters, want none", n)
	}
}

// TestConsumerDeadLettersPoisonAndReplays sends a malformed message, an event refused with a
// permanent error and one that fails past its retry period, then a good event, all on one
// partition: the three are dead-lettered, the good one is handled behind them, and a replay
// handles a dead letter once the handler works.
func TestConsumerDeadLettersPoisonAndReplays(t *testing.T) {
	t.Parallel()
	h := newHandled()
	var mu sync.Mutex
	broken := true
	var permanent, transient string
	f := newConsumerFixture(t, func(ctx context.Context, ev events.Event) error {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case broken && ev.ID == permanent:
			return h.record(ev, events.Permanent(errors.New("this claim names no object")))
		case broken && ev.ID == transient:
			return h.record(ev, errors.New("the store is unavailable"))
		}
		return h.record(ev, nil)
	})
	f.cfg.RetryFor = time.Second
	w := &kafka.Writer{Addr: kafka.TCP(f.env.Brokers...), Topic: f.env.Name + "." + events.TopicClaims, AllowAutoTopicCreation: true,
		Balancer: &kafka.Hash{}, BatchTimeout: 5 * time.Millisecond}
	defer w.Close()
	if err := w.WriteMessages(context.Background(), kafka.Message{Key: []byte("obj_p"), Value: []byte("not an event")}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	p, r := f.publish(t, "obj_p"), f.publish(t, "obj_p")
	permanent, transient = p.ID, r.ID
	mu.Unlock()
	good := f.publish(t, "obj_p")
	f.start(t)
	eventually(t, 30*time.Second, "the event behind the poison ones is handled", func() bool {
		done, _, _ := h.get(good.ID)
		return done == 1
	})
	ctx := context.Background()
	dead := events.NewDeadLetters(f.db, f.cfg.Processed, map[string]events.Handler{f.cfg.GroupID: f.cfg.Handler})
	list, err := dead.List(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	byEvent := map[string]events.DeadLetter{}
	for _, d := range list {
		byEvent[d.EventID] = d
	}
	if len(list) != 3 || byEvent[p.ID].ID == "" || byEvent[r.ID].ID == "" || byEvent[""].ID == "" {
		t.Fatalf("dead letters %+v, want the malformed message, %s and %s", list, p.ID, r.ID)
	}
	if _, attempts, _ := h.get(p.ID); attempts != 1 {
		t.Errorf("an event refused permanently was attempted %d times, want 1", attempts)
	}
	if _, attempts, _ := h.get(r.ID); attempts < 2 {
		t.Errorf("a failing event was attempted %d times before it was dead-lettered, want retries", attempts)
	}
	if err := dead.Replay(ctx, byEvent[""].ID); err == nil {
		t.Error("replaying a malformed message succeeded")
	}
	mu.Lock()
	broken = false
	mu.Unlock()
	for _, id := range []string{p.ID, r.ID} {
		if err := dead.Replay(ctx, byEvent[id].ID); err != nil {
			t.Fatalf("replay %s: %v", id, err)
		}
		if done, _, _ := h.get(id); done != 1 {
			t.Errorf("replayed event handled %d times, want 1", done)
		}
	}
	if err := dead.Delete(ctx, byEvent[""].ID); err != nil {
		t.Fatal(err)
	}
	if list, _ := dead.List(ctx, 10); len(list) != 0 {
		t.Errorf("dead letters left after replay and delete: %+v", list)
	}
	if err := dead.Replay(ctx, p.ID); !errors.Is(err, events.ErrUnknownDeadLetter) {
		t.Errorf("replaying an unknown dead letter: %v, want ErrUnknownDeadLetter", err)
	}
}

// TestConsumerCommitsHandledEventsWithoutDedupeRecords runs a consumer of an idempotent handler
// (no processed collection) over a burst of one key's events: they are handled in order, and
// after a restart of the group none is handled again, so the offsets committed beside the worker
// reached the broker before it stopped.
func TestConsumerCommitsHandledEventsWithoutDedupeRecords(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var order []string
	f := newConsumerFixture(t, func(_ context.Context, ev events.Event) error {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, ev.ID)
		return nil
	})
	f.cfg.Processed = nil
	var sent []string
	for range 50 {
		sent = append(sent, f.publish(t, "obj_burst").ID)
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(order) }
	stop := f.start(t)
	eventually(t, 30*time.Second, "the burst is handled", func() bool { return count() >= len(sent) })
	stop()
	mu.Lock()
	if !slices.Equal(order, sent) {
		t.Fatalf("handled %v, want the events once each in the order sent %v", order, sent)
	}
	mu.Unlock()

	last := f.publish(t, "obj_burst")
	f.start(t)
	eventually(t, 30*time.Second, "the restarted consumer handles the new event", func() bool { return count() > len(sent) })
	time.Sleep(500 * time.Millisecond) // anything redelivered would arrive with or just after it
	mu.Lock()
	defer mu.Unlock()
	if got := order[len(sent):]; !slices.Equal(got, []string{last.ID}) {
		t.Fatalf("after the restart the consumer handled %v, want only %s", got, last.ID)
	}
	if n, err := f.db.Collection("processed_events").CountDocuments(context.Background(), bson.D{}); err != nil || n != 0 {
		t.Errorf("dedupe records written: %d (%v), want none", n, err)
	}
}

// TestConsumerDedupes publishes one event three times (a relay publishes again when its
// acknowledgement was lost): it is handled once; a later event after the copies is handled too.
func TestConsumerDedupes(t *testing.T) {
	t.Parallel()
	h := newHandled()
	f := newConsumerFixture(t, func(_ context.Context, ev events.Event) error { return h.record(ev, nil) })
	f.start(t)
	ev := f.publish(t, "dup")
	for range 2 {
		if err := f.prod.Publish(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	last := f.publish(t, "dup") // same key: the same partition, after the copies
	eventually(t, 30*time.Second, "the event after the copies is handled", func() bool {
		done, _, _ := h.get(last.ID)
		return done == 1
	})
	if done, attempts, _ := h.get(ev.ID); done != 1 || attempts != 1 {
		t.Fatalf("an event published three times was handled %d times in %d attempts, want once", done, attempts)
	}
}

// TestConsumerBatches runs a batch handler over a backlog of one key's events with a poison event
// in it: the backlog is handled in batches; the batch holding the poison fails and its events are
// handled one at a time, so every other event is handled, in order, and the poison alone is
// dead-lettered; after a restart nothing is handled again.
func TestConsumerBatches(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var order []string
	var sizes []int
	poison := ""
	f := newConsumerFixture(t, nil)
	f.cfg.Processed, f.cfg.MaxBatch = nil, 16
	f.cfg.Batch = func(_ context.Context, evs []events.Event) error {
		mu.Lock()
		defer mu.Unlock()
		for _, ev := range evs {
			if ev.ID == poison {
				return events.Permanent(errors.New("poison"))
			}
		}
		sizes = append(sizes, len(evs))
		for _, ev := range evs {
			order = append(order, ev.ID)
		}
		return nil
	}
	var want []string
	for i := range 60 {
		ev := f.publish(t, "obj_batch")
		if i == 30 {
			mu.Lock()
			poison = ev.ID
			mu.Unlock()
			continue
		}
		want = append(want, ev.ID)
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(order) }
	stop := f.start(t)
	eventually(t, 30*time.Second, "the backlog is handled", func() bool { return count() >= len(want) })
	dead := events.NewDeadLetters(f.db, nil, nil)
	eventually(t, 30*time.Second, "the poison is dead-lettered", func() bool {
		list, err := dead.List(context.Background(), 10)
		return err == nil && len(list) == 1 && list[0].EventID == poison
	})
	stop()
	mu.Lock()
	if !slices.Equal(order, want) {
		t.Errorf("handled %v, want every event but the poison once, in order: %v", order, want)
	}
	if slices.Max(sizes) < 2 {
		t.Errorf("batch sizes %v, want the backlog handled in batches", sizes)
	}
	if slices.Max(sizes) > 16 {
		t.Errorf("batch sizes %v, want none above MaxBatch", sizes)
	}
	mu.Unlock()

	last := f.publish(t, "obj_batch")
	f.start(t)
	eventually(t, 30*time.Second, "the restarted consumer handles the new event", func() bool { return count() > len(want) })
	time.Sleep(500 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if got := order[len(want):]; !slices.Equal(got, []string{last.ID}) {
		t.Errorf("after the restart the consumer handled %v, want only %s", got, last.ID)
	}
}
