package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// topicLog collects the ids of the events published on one topic, read from Kafka as a consumer
// would.
type topicLog struct {
	mu    sync.Mutex
	seen  map[string]int
	first map[string]time.Time
}

func watchTopic(t *testing.T, env testkit.Env, topic string) *topicLog {
	t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: env.Brokers, GroupID: env.Name + ".watch", GroupTopics: []string{env.Name + "." + topic},
		StartOffset: kafka.FirstOffset, MaxWait: 100 * time.Millisecond, HeartbeatInterval: 500 * time.Millisecond,
		SessionTimeout: 6 * time.Second, RebalanceTimeout: 6 * time.Second, JoinGroupBackoff: 250 * time.Millisecond,
	})
	ctx, cancel := context.WithCancel(context.Background())
	l := &topicLog{seen: map[string]int{}, first: map[string]time.Time{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			msg, err := r.ReadMessage(ctx)
			if err != nil {
				time.Sleep(50 * time.Millisecond)
				continue
			}
			var ev events.Event
			if json.Unmarshal(msg.Value, &ev) == nil {
				l.mu.Lock()
				l.seen[ev.ID]++
				if l.seen[ev.ID] == 1 {
					l.first[ev.ID] = time.Now()
				}
				l.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done; _ = r.Close() })
	return l
}

func (l *topicLog) count(id string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seen[id]
}

// waitFor waits until every id was published.
func (l *topicLog) waitFor(t *testing.T, ids ...string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for _, id := range ids {
		for l.count(id) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("event %s never reached Kafka", id)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// recorder is a publisher that counts the batches it passes to the real producer, and can be
// switched to a producer whose broker does not answer (Kafka down).
type recorder struct {
	mu      sync.Mutex
	live    *events.Producer
	dead    *events.Producer
	down    bool
	batches []int
	failed  int
}

func (r *recorder) Publish(ctx context.Context, evs ...events.Pending) error {
	r.mu.Lock()
	p := r.live
	if r.down {
		p = r.dead
	}
	r.mu.Unlock()
	err := p.Publish(ctx, evs...)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.failed++
	} else {
		r.batches = append(r.batches, len(evs))
	}
	return err
}

func (r *recorder) set(down bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.down = down
}

func (r *recorder) stats() (batches []int, failed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]int(nil), r.batches...), r.failed
}

// fixture is an outbox over a test database, with its relay running.
type fixture struct {
	env    testkit.Env
	db     *mongo.Database
	pub    *recorder
	outbox *events.Outbox
	log    *topicLog
	stop   func()
}

// newFixture builds an outbox on a database of the test's own; monitor, when given, sees every
// command of the outbox's client.
func newFixture(t *testing.T, opts events.OutboxOptions, monitor ...*event.CommandMonitor) *fixture {
	t.Helper()
	env := testkit.Backends(t)
	f := &fixture{env: env}
	if len(monitor) == 0 {
		f.db = testkit.Database(t, env, "events")
	} else {
		client, db, err := mongox.Connect(context.Background(), env.MongoURI, env.Name+"_events", monitor...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = db.Drop(context.Background())
			_ = client.Disconnect(context.Background())
		})
		f.db = db
	}
	live := events.NewProducer(env.Brokers, env.Name+".")
	dead := events.NewProducer([]string{"127.0.0.1:1"}, env.Name+".")
	t.Cleanup(func() { _ = live.Close(); _ = dead.Close() })
	f.pub = &recorder{live: live, dead: dead}
	f.outbox = events.NewOutbox(f.db, f.pub, testkit.Logger(t), opts)
	f.log = watchTopic(t, env, events.TopicIdentity)
	return f
}

func (f *fixture) run(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = f.outbox.Run(ctx) }()
	f.stop = func() { cancel(); <-done }
	t.Cleanup(f.stop)
}

// write stages an event, then writes the domain document that records it, as a service does.
func (f *fixture) write(t *testing.T, docID string) events.Pending {
	t.Helper()
	ctx := context.Background()
	ev := events.MustNew(events.TopicIdentity, events.ObjectCreated, "obj_"+docID, "svc_"+docID, "req_"+docID, map[string]string{"doc": docID})
	if err := f.outbox.Stage(ctx, "things", docID, ev); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.Collection("things").InsertOne(ctx, bson.M{"_id": docID, events.EventsField: events.IDs(ev)}); err != nil {
		t.Fatal(err)
	}
	return ev
}

func (f *fixture) documents(t *testing.T) int64 {
	t.Helper()
	n, err := f.db.Collection(events.OutboxCollection).CountDocuments(context.Background(), bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// pending counts the outbox's entries (the keys of the sweep's range sort after them).
func (f *fixture) pending(t *testing.T) int64 {
	t.Helper()
	n, err := f.db.Collection(events.OutboxCollection).CountDocuments(context.Background(), bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: "~"}}}})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// waitEmpty waits until the outbox holds nothing: no entry, and no key of the sweep's range.
func (f *fixture) waitEmpty(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for f.documents(t) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the outbox still holds %d entries", f.pending(t))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestOutboxPublishesInBatches confirms many writes at once and checks that the relay publishes
// them in one batch and leaves the outbox empty.
func TestOutboxPublishesInBatches(t *testing.T) {
	t.Parallel()
	f := newFixture(t, events.OutboxOptions{SweepInterval: time.Hour})
	var ids []string
	for i := range 120 {
		ev := f.write(t, fmt.Sprintf("doc%d", i))
		f.outbox.Confirm(ev)
		ids = append(ids, ev.ID)
	}
	if n := f.pending(t); n != 120 {
		t.Fatalf("outbox holds %d entries before the relay runs, want 120", n)
	}
	f.run(t)
	f.log.waitFor(t, ids...)
	f.waitEmpty(t)
	batches, _ := f.pub.stats()
	if len(batches) != 1 || batches[0] != 120 {
		t.Errorf("published in batches %v, want one batch of 120", batches)
	}
}

// TestOutboxSurvivesKafkaDown publishes while Kafka is unreachable: the events wait in the
// outbox, one of them even after its document is deleted, and all reach Kafka once it is back.
func TestOutboxSurvivesKafkaDown(t *testing.T) {
	t.Parallel()
	f := newFixture(t, events.OutboxOptions{SweepInterval: 200 * time.Millisecond, RecoverAfter: 100 * time.Millisecond})
	f.pub.set(true)
	f.run(t)
	a, b := f.write(t, "a"), f.write(t, "b")
	f.outbox.Confirm(a, b)
	deadline := time.Now().Add(30 * time.Second)
	for _, failed := f.pub.stats(); failed < 2; _, failed = f.pub.stats() {
		if time.Now().After(deadline) {
			t.Fatal("the relay never tried to publish")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := f.pending(t); n != 2 {
		t.Fatalf("outbox holds %d entries while Kafka is down, want 2", n)
	}
	// The write of b is known: its event must go out even though its document is gone now.
	if _, err := f.db.Collection("things").DeleteOne(context.Background(), bson.M{"_id": "b"}); err != nil {
		t.Fatal(err)
	}
	f.stop() // the process stops while Kafka is down; a new one takes over
	f.pub.set(false)
	f.run(t)
	f.log.waitFor(t, a.ID, b.ID)
	f.waitEmpty(t)
}

// TestOutboxRecoversUnconfirmedEvents plays a writer that died between its write and the
// confirmation, and one that died before its write: the sweep publishes the first event,
// drops the second, and drops the events of a resumed write whose document carries others.
func TestOutboxRecoversUnconfirmedEvents(t *testing.T) {
	t.Parallel()
	f := newFixture(t, events.OutboxOptions{SweepInterval: 100 * time.Millisecond, RecoverAfter: 200 * time.Millisecond, DiscardAfter: 2 * time.Second})
	ctx := context.Background()
	written := f.write(t, "written")
	never := events.MustNew(events.TopicIdentity, events.ObjectCreated, "obj_never", "svc_never", "req_never", map[string]string{})
	if err := f.outbox.Stage(ctx, "things", "never", never); err != nil {
		t.Fatal(err)
	}
	other := events.MustNew(events.TopicIdentity, events.ObjectCreated, "obj_written", "svc_written", "req_retry", map[string]string{})
	if err := f.outbox.Stage(ctx, "things", "written", other); err != nil {
		t.Fatal(err)
	}
	f.run(t)
	f.log.waitFor(t, written.ID)
	f.waitEmpty(t)
	time.Sleep(time.Second) // room for a wrongly published event to show
	if f.log.count(never.ID) != 0 || f.log.count(other.ID) != 0 {
		t.Errorf("events of writes that never happened were published: never=%d other=%d", f.log.count(never.ID), f.log.count(other.ID))
	}
	if batches, _ := f.pub.stats(); len(batches) != 1 {
		t.Errorf("published batches %v, want only the recovered event", batches)
	}
}

// TestOutboxStageIsIdempotent stages the same events twice, as a resumed send does.
func TestOutboxStageIsIdempotent(t *testing.T) {
	t.Parallel()
	f := newFixture(t, events.OutboxOptions{})
	ev := events.MustNew(events.TopicIdentity, events.ObjectCreated, "obj_1", "svc_1", "req_1", map[string]string{})
	for range 2 {
		if err := f.outbox.Stage(context.Background(), "things", "1", ev); err != nil {
			t.Fatalf("staging again: %v", err)
		}
	}
	if n := f.pending(t); n != 1 {
		t.Errorf("outbox holds %d entries, want 1", n)
	}
}

// TestOutboxKeepsEventsOfDeletedDocuments plays a writer that died after its write, and a
// later request that deletes the document: kept first, the event is still published.
func TestOutboxKeepsEventsOfDeletedDocuments(t *testing.T) {
	t.Parallel()
	f := newFixture(t, events.OutboxOptions{SweepInterval: 100 * time.Millisecond, RecoverAfter: 200 * time.Millisecond, DiscardAfter: time.Second})
	ev := f.write(t, "block")
	if err := f.outbox.Keep(context.Background(), ev.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.Collection("things").DeleteOne(context.Background(), bson.M{"_id": "block"}); err != nil {
		t.Fatal(err)
	}
	f.run(t)
	f.log.waitFor(t, ev.ID)
	f.waitEmpty(t)
}

// TestOutboxSweepPagesThroughABacklog leaves a backlog larger than a sweep page behind entries
// whose writes are still under way: the sweep pages past them and publishes all of it. A sweep
// that read only its first page would meet the same 20 unwritten entries every time and never
// publish the backlog, however often it ran; sweeps repeat so that a publish that fails once on
// a busy machine (a topic being created) is taken again, as in production.
func TestOutboxSweepPagesThroughABacklog(t *testing.T) {
	t.Parallel()
	f := newFixture(t, events.OutboxOptions{Batch: 5, SweepInterval: 500 * time.Millisecond, RecoverAfter: time.Millisecond})
	ctx := context.Background()
	for i := range 30 { // writes under way: staged, no document yet
		ev := events.MustNew(events.TopicIdentity, events.ObjectCreated, "obj", "svc_x", "req", map[string]int{"i": i})
		if err := f.outbox.Stage(ctx, "things", fmt.Sprintf("later%d", i), ev); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	for i := range 50 { // writes whose writer died before confirming
		ids = append(ids, f.write(t, fmt.Sprintf("doc%d", i)).ID)
	}
	f.run(t)
	f.log.waitFor(t, ids...)
	eventually(t, 10*time.Second, "the backlog is acknowledged", func() bool { return f.pending(t) == 30 })
}

// TestOutboxSweepsMoreThanOneInHolds: a backlog of more events than one _id $in may name (the
// embedded store serves up to mongox.MaxIDIn from its _id index) is read, published and
// acknowledged in full with the outbox's default batches, and no command names more.
func TestOutboxSweepsMoreThanOneInHolds(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	longest := 0 // the most ids of an _id $in the outbox sent
	monitor := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		var qs []bson.Raw
		switch e.CommandName {
		case "find":
			q, _ := e.Command.Lookup("filter").DocumentOK()
			qs = append(qs, q)
		case "update", "delete":
			list := map[string]string{"update": "updates", "delete": "deletes"}[e.CommandName]
			vals, _ := e.Command.Lookup(list).Array().Values()
			for _, v := range vals {
				q, _ := v.Document().Lookup("q").DocumentOK()
				qs = append(qs, q)
			}
		}
		for _, q := range qs {
			if in, err := q.LookupErr("_id", "$in"); err == nil {
				vals, _ := in.Array().Values()
				mu.Lock()
				longest = max(longest, len(vals))
				mu.Unlock()
			}
		}
	}}
	f := newFixture(t, events.OutboxOptions{SweepInterval: 500 * time.Millisecond, RecoverAfter: time.Millisecond}, monitor)
	const n = mongox.MaxIDIn + 150
	var ids []string
	for i := range n { // writes whose writer died before confirming
		ids = append(ids, f.write(t, fmt.Sprintf("doc%04d", i)).ID)
	}
	f.run(t)
	f.log.waitFor(t, ids...)
	f.waitEmpty(t)
	mu.Lock()
	defer mu.Unlock()
	if longest == 0 || longest > mongox.MaxIDIn {
		t.Errorf("the outbox sent an _id $in of %d ids, want 1 to %d", longest, mongox.MaxIDIn)
	}
}

// TestOutboxCarriesEarlierEntriesOver leaves entries as an earlier release staged them (no key
// in the sweep's range) behind writes whose writers died: one written, one never. The relay's
// start gives them keys; the sweep publishes the first and drops the second.
func TestOutboxCarriesEarlierEntriesOver(t *testing.T) {
	t.Parallel()
	f := newFixture(t, events.OutboxOptions{SweepInterval: 100 * time.Millisecond, RecoverAfter: 200 * time.Millisecond, DiscardAfter: time.Second})
	ctx := context.Background()
	old := func(ev events.Pending, docID string) bson.D {
		return bson.D{{Key: "_id", Value: ev.ID}, {Key: "topic", Value: ev.Topic}, {Key: "key", Value: ev.Key}, {Key: "type", Value: ev.Type},
			{Key: "payload", Value: ev.Payload}, {Key: "collection", Value: "things"}, {Key: "doc_id", Value: docID},
			{Key: "created_at", Value: time.Now().Add(-time.Minute)}}
	}
	written := events.MustNew(events.TopicIdentity, events.ObjectCreated, "obj_w", "svc_w", "req_w", map[string]string{})
	never := events.MustNew(events.TopicIdentity, events.ObjectCreated, "obj_n", "svc_n", "req_n", map[string]string{})
	if _, err := f.db.Collection(events.OutboxCollection).InsertMany(ctx, []any{old(written, "w"), old(never, "n")}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.Collection("things").InsertOne(ctx, bson.M{"_id": "w", events.EventsField: events.IDs(written)}); err != nil {
		t.Fatal(err)
	}
	f.run(t)
	f.log.waitFor(t, written.ID)
	f.waitEmpty(t)
	if f.log.count(never.ID) != 0 {
		t.Errorf("the event of a write that never happened was published")
	}
}
