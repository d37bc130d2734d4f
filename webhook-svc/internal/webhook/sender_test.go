package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
	"github.com/svcdev/svc/pkg/versions"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// senderEnv is a sender over the embedded store, delivering to a local receiver whose answers
// the test chooses.
type senderEnv struct {
	st     *store.Store
	sender *Sender
	fanout *Fanout
	sub    *store.Subscription
	subs   *SubscriptionCache

	mu     sync.Mutex
	status []int // answers still to give, then 200
	got    []string
	// arrived is told of each request as it arrives; gate, when set, holds every request until it
	// is closed; delay slows every answer.
	arrived chan struct{}
	gate    chan struct{}
	delay   time.Duration
}

func newSenderEnv(t *testing.T) *senderEnv {
	t.Helper()
	env := testkit.Backends(t)
	db := testkit.Database(t, env, "webhook")
	ctx := context.Background()
	if err := mongox.EnsureIndexes(ctx, db, store.Indexes); err != nil {
		t.Fatal(err)
	}
	e := &senderEnv{st: store.New(db)}
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.got = append(e.got, r.Header.Get("webhook-id"))
		arrived, gate, delay := e.arrived, e.gate, e.delay
		e.mu.Unlock()
		if arrived != nil {
			select {
			case arrived <- struct{}{}:
			default:
			}
		}
		if gate != nil {
			<-gate
		}
		time.Sleep(delay)
		e.mu.Lock()
		defer e.mu.Unlock()
		code := http.StatusOK
		if len(e.status) > 0 {
			code, e.status = e.status[0], e.status[1:]
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(rcv.Close)
	e.sender = &Sender{
		Store: e.st, HTTP: rcv.Client(), Lease: 20 * time.Second, Timeout: time.Second, DisableAfter: time.Hour,
		Retry:        RetryStrategy{Schedule: []time.Duration{300 * time.Millisecond}},
		PollInterval: 50 * time.Millisecond, Workers: 4, Log: testkit.Logger(t),
	}
	opts, err := redis.ParseURL(env.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	subs := NewSubscriptionCache(e.st, versions.New(rdb, testkit.Logger(t), "test:subs:", TokenTTL), 10)
	e.subs = subs
	e.sender.Subscribers = subs
	e.fanout = &Fanout{Store: e.st, Subscribers: subs, Sender: e.sender}
	now := clock.Now()
	e.sub = &store.Subscription{ID: "whk_1", Kind: store.KindWebhook, ObjectID: "obj_1", CreatorID: "obj_1",
		CallbackURL: rcv.URL, Events: []string{events.WebhookMessage}, Secrets: []store.Secret{{Value: NewSecret(), CreatedAt: now}},
		CreatedAt: now, UpdatedAt: now}
	insertPlaced(t, subs, e.sub)
	return e
}

// received returns the webhook-ids the receiver was sent.
func (e *senderEnv) received() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.got...)
}

// schedule returns every entry of the schedule, by delivery id.
func (e *senderEnv) schedule(t *testing.T) map[string]time.Time {
	t.Helper()
	all, err := e.st.DueEntries(context.Background(), "", time.Now().Add(1000*time.Hour), 1000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]time.Time{}
	for _, en := range all {
		out[en.ID] = en.DueAt
	}
	return out
}

func (e *senderEnv) delivery(t *testing.T, id string) *store.Delivery {
	t.Helper()
	d, err := e.st.Delivery(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (e *senderEnv) insert(t *testing.T, d *store.Delivery) {
	t.Helper()
	d.SubscriptionID, d.EventID, d.Event, d.Body, d.Attempts = e.sub.ID, d.ID, events.WebhookMessage, "{}", []store.Attempt{}
	if _, err := e.st.InsertDeliveries(context.Background(), []*store.Delivery{d}); err != nil {
		t.Fatal(err)
	}
}

func message(id string) events.Event {
	data, _ := json.Marshal(map[string]any{"message_id": "msg_" + id, "body": "hi"})
	return events.Event{ID: id, Type: events.MessageCreated, ObjectID: "obj_1", Hash: "svc_a", Time: clock.Format(clock.Now()), Data: data}
}

// TestPollDeletesEntriesOfFinalOrMissingDeliveries polls a schedule holding an entry whose
// writer stopped before the delivery was inserted (due more than a lease ago), an entry whose
// delivery is still on its way (a replay's, due at once), one not yet due, and the entry of a
// final delivery: the lost and the final ones are deleted, the others kept, nothing is sent; once
// the replay's delivery is in, the next poll delivers it.
func TestPollDeletesEntriesOfFinalOrMissingDeliveries(t *testing.T) {
	t.Parallel()
	e := newSenderEnv(t)
	ctx := context.Background()
	now := clock.Now()
	e.insert(t, &store.Delivery{ID: "evt_done.whk_1", Status: store.StatusSucceeded, CreatedAt: now})
	if err := e.st.InsertDue(ctx,
		store.Due("evt_lost.whk_1", now.Add(-e.sender.Lease-time.Second)),
		store.Due("dlv_replay", now.Add(-time.Second)),
		store.Due("evt_early.whk_1", now.Add(time.Hour)),
		store.Due("evt_done.whk_1", now.Add(-time.Second)),
	); err != nil {
		t.Fatal(err)
	}
	if err := e.sender.poll(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.schedule(t); len(got) != 2 || got["evt_early.whk_1"].IsZero() || got["dlv_replay"].IsZero() {
		t.Fatalf("schedule after the poll: %v; want the entry not yet due and the replay's", got)
	}
	if got := e.received(); len(got) != 0 {
		t.Fatalf("the poll sent %v", got)
	}
	next := now.Add(-time.Second)
	e.insert(t, &store.Delivery{ID: "dlv_replay", Status: store.StatusPending, NextAttemptAt: &next, CreatedAt: now})
	if err := e.sender.poll(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.received(); !slices.Equal(got, []string{"dlv_replay"}) {
		t.Fatalf("after its delivery was inserted the poll sent %v, want the replay", got)
	}
}

// TestPollMovesAnEarlyEntry polls an entry due before its delivery's next attempt (a replica
// stopped between writing a retry's delivery and moving its entry): the entry moves to the
// delivery's next attempt and nothing is sent before it.
func TestPollMovesAnEarlyEntry(t *testing.T) {
	t.Parallel()
	e := newSenderEnv(t)
	ctx := context.Background()
	now := clock.Now()
	next := now.Add(time.Hour)
	e.insert(t, &store.Delivery{ID: "evt_1.whk_1", Status: store.StatusPending, NextAttemptAt: &next, CreatedAt: now})
	if err := e.st.InsertDue(ctx, store.Due("evt_1.whk_1", now.Add(-time.Second))); err != nil {
		t.Fatal(err)
	}
	if err := e.sender.poll(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.schedule(t); !got["evt_1.whk_1"].Equal(next) {
		t.Fatalf("entry due at %v, want the delivery's next attempt %v", got["evt_1.whk_1"], next)
	}
	if got, d := e.received(), e.delivery(t, "evt_1.whk_1"); len(got) != 0 || len(d.Attempts) != 0 {
		t.Fatalf("the poll sent %v and recorded %d attempts", got, len(d.Attempts))
	}
}

// TestFanoutSchedulesEachDeliveryUntilItIsFinal follows two events through the fan-out: the
// first succeeds at once and its entry goes with the next flush; the second fails, its entry
// moves to the retry, and the poll makes the retry when it is due.
func TestFanoutSchedulesEachDeliveryUntilItIsFinal(t *testing.T) {
	t.Parallel()
	e := newSenderEnv(t)
	ctx := context.Background()
	if err := e.fanout.Handle(ctx, []events.Event{message("evt_ok")}); err != nil {
		t.Fatal(err)
	}
	e.sender.busy.Wait() // the first attempt, made on the subscription's lane
	if d := e.delivery(t, "evt_ok.whk_1"); d.Status != store.StatusSucceeded {
		t.Fatalf("first delivery %s, want succeeded", d.Status)
	}
	if got := e.schedule(t); len(got) != 1 {
		t.Fatalf("before the flush the schedule holds %v; want the succeeded delivery's entry, deleted in a batch", got)
	}
	e.sender.flush(ctx)
	if got := e.schedule(t); len(got) != 0 {
		t.Fatalf("after the flush the schedule holds %v", got)
	}

	e.mu.Lock()
	e.status = []int{http.StatusServiceUnavailable}
	e.mu.Unlock()
	if err := e.fanout.Handle(ctx, []events.Event{message("evt_retry")}); err != nil {
		t.Fatal(err)
	}
	e.sender.busy.Wait()
	d := e.delivery(t, "evt_retry.whk_1")
	if d.Status != store.StatusPending || d.NextAttemptAt == nil {
		t.Fatalf("failed first attempt left the delivery %s, next %v", d.Status, d.NextAttemptAt)
	}
	if got := e.schedule(t); !got[d.ID].Equal(*d.NextAttemptAt) {
		t.Fatalf("entry due at %v, want the retry at %v", got[d.ID], *d.NextAttemptAt)
	}
	time.Sleep(time.Until(*d.NextAttemptAt) + 10*time.Millisecond)
	if err := e.sender.poll(ctx); err != nil {
		t.Fatal(err)
	}
	if d := e.delivery(t, d.ID); d.Status != store.StatusSucceeded || len(d.Attempts) != 2 {
		t.Fatalf("after the retry the delivery is %s with %d attempts", d.Status, len(d.Attempts))
	}
	e.sender.flush(ctx)
	if got := e.schedule(t); len(got) != 0 {
		t.Fatalf("after the retry and a flush the schedule holds %v", got)
	}
	if got := e.received(); len(got) != 3 {
		t.Fatalf("receiver got %v, want evt_ok, then evt_retry twice", got)
	}
}

// TestRunDeliversDeliveriesStoredBeforeTheSchedule starts the sender over a pending delivery that
// has no entry, as the service stored them long ago: the start-up step schedules it, the sender
// delivers it, and the stop flushes its entry away.
func TestRunDeliversDeliveriesStoredBeforeTheSchedule(t *testing.T) {
	t.Parallel()
	e := newSenderEnv(t)
	now := clock.Now()
	due := now.Add(-time.Minute)
	e.insert(t, &store.Delivery{ID: "evt_old.whk_1", Status: store.StatusPending, NextAttemptAt: &due, CreatedAt: due})
	if n, err := e.st.CarryOver(context.Background(), now, time.Hour); err != nil || n != 1 {
		t.Fatalf("carrying the stored deliveries over: %d, %v; want 1", n, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.sender.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for e.delivery(t, "evt_old.whk_1").Status != store.StatusSucceeded {
		if time.Now().After(deadline) {
			cancel()
			t.Fatal("the delivery stored before the schedule was never delivered")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := e.received(); len(got) != 1 || got[0] != "evt_old.whk_1" {
		t.Fatalf("receiver got %v", got)
	}
	if got := e.schedule(t); len(got) != 0 {
		t.Fatalf("after the stop the schedule holds %v", got)
	}
}

// TestFanoutBatchKeepsOrder hands the fan-out a batch of events, one of them already delivered (a
// redelivered batch): each new event is scheduled, delivered once and in the batch's order while
// the outcomes are recorded beside the lane, and the one already delivered is not sent again.
func TestFanoutBatchKeepsOrder(t *testing.T) {
	t.Parallel()
	e := newSenderEnv(t)
	ctx := context.Background()
	if err := e.fanout.Handle(ctx, []events.Event{message("evt_00")}); err != nil {
		t.Fatal(err)
	}
	e.sender.busy.Wait()
	batch := []events.Event{message("evt_00")}
	want := []string{"evt_00"}
	for i := 1; i <= 30; i++ {
		id := fmt.Sprintf("evt_%02d", i)
		batch = append(batch, message(id))
		want = append(want, id)
	}
	if err := e.fanout.Handle(ctx, batch); err != nil {
		t.Fatal(err)
	}
	e.sender.busy.Wait()
	if got := e.received(); !slices.Equal(got, want) {
		t.Fatalf("receiver got %v, want each event once, in order: %v", got, want)
	}
	for _, id := range want {
		if d := e.delivery(t, id+".whk_1"); d.Status != store.StatusSucceeded || len(d.Attempts) != 1 {
			t.Errorf("%s: %s after %d attempts, want succeeded after one", id, d.Status, len(d.Attempts))
		}
	}
	e.sender.flush(ctx)
	if got := e.schedule(t); len(got) != 0 {
		t.Errorf("after the flush the schedule holds %v", got)
	}
}
