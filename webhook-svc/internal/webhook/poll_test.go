package webhook

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// dueBacklog stores n deliveries of sub due now, as the fan-out stores those it finds no lane
// place for, and returns their ids in order.
func (e *senderEnv) dueBacklog(t *testing.T, subID string, n int) []string {
	t.Helper()
	now := clock.Now()
	ds := make([]*store.Delivery, n)
	ids := make([]string, n)
	for i := range ds {
		ev := fmt.Sprintf("evt_%s_%03d", subID, i)
		ids[i] = ev + "." + subID
		ds[i] = &store.Delivery{ID: ids[i], SubscriptionID: subID, EventID: ev, Event: "message", Body: "{}",
			CreatedAt: now, Status: store.StatusPending, NextAttemptAt: &now, Attempts: []store.Attempt{}}
	}
	if _, err := e.st.InsertScheduled(context.Background(), ds); err != nil {
		t.Fatal(err)
	}
	return ids
}

// TestPollRecordsAPageTogether polls a page mixing deliveries to a live subscription, two of
// which the endpoint answers 503, and deliveries to a deleted one: the live ones are sent once
// each, the 503s scheduled for their retry with one attempt recorded, the others failed unsent;
// the schedule keeps only the retries, and the delivery log has a line per attempt made.
func TestPollRecordsAPageTogether(t *testing.T) {
	t.Parallel()
	e := newSenderEnv(t)
	ctx := context.Background()
	e.status = []int{http.StatusServiceUnavailable, http.StatusServiceUnavailable}
	live := e.dueBacklog(t, e.sub.ID, 12)
	gone := e.dueBacklog(t, "whk_gone", 3)
	if err := e.sender.poll(ctx); err != nil {
		t.Fatal(err)
	}
	got := e.received()
	slices.Sort(got)
	want := make([]string, len(live))
	for i, id := range live {
		want[i] = id[:len(id)-len("."+e.sub.ID)]
	}
	if !slices.Equal(got, want) {
		t.Fatalf("receiver got %v, want each live delivery once: %v", got, want)
	}
	var retrying []string
	for _, id := range live {
		d := e.delivery(t, id)
		switch {
		case len(d.Attempts) != 1:
			t.Errorf("%s: %d attempts recorded, want 1", id, len(d.Attempts))
		case d.Status == store.StatusPending && d.NextAttemptAt != nil:
			retrying = append(retrying, id)
		case d.Status != store.StatusSucceeded:
			t.Errorf("%s: %s", id, d.Status)
		}
	}
	for _, id := range gone {
		if d := e.delivery(t, id); d.Status != store.StatusFailed || len(d.Attempts) != 1 || d.Attempts[0].Error != reasonDeleted {
			t.Errorf("%s: %s with %+v; want failed unsent (%q)", id, d.Status, d.Attempts, reasonDeleted)
		}
	}
	schedule := e.schedule(t)
	if len(retrying) != 2 || len(schedule) != 2 {
		t.Fatalf("retrying %v, schedule %v; want the two 503s, each with its entry", retrying, schedule)
	}
	for _, id := range retrying {
		if d := e.delivery(t, id); !schedule[id].Equal(*d.NextAttemptAt) {
			t.Errorf("%s: entry due at %v, want its retry at %v", id, schedule[id], *d.NextAttemptAt)
		}
	}
	logged, err := e.st.Attempts(ctx, store.AttemptRange{SubscriptionID: e.sub.ID}, 100, true)
	if err != nil || len(logged) != len(live) {
		t.Fatalf("delivery log: %d lines, %v; want %d", len(logged), err, len(live))
	}
}

// TestPollWalksTheWholeBacklog stores more due deliveries than a page holds: one poll delivers
// them all, page after page, and leaves the schedule empty.
func TestPollWalksTheWholeBacklog(t *testing.T) {
	t.Parallel()
	e := newSenderEnv(t)
	ids := e.dueBacklog(t, e.sub.ID, 2*pollPage+7)
	if err := e.sender.poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := e.received(); len(got) != len(ids) {
		t.Fatalf("one poll delivered %d of %d", len(got), len(ids))
	}
	if got := e.schedule(t); len(got) != 0 {
		t.Fatalf("after the poll the schedule holds %d entries", len(got))
	}
}

// TestPollersOfTwoReplicasDeliverEachOnce has two replicas poll the same backlog at once: the
// claims of each page let one of them make each attempt, so every delivery is sent once.
func TestPollersOfTwoReplicasDeliverEachOnce(t *testing.T) {
	t.Parallel()
	e := newSenderEnv(t)
	ids := e.dueBacklog(t, e.sub.ID, 150)
	other := &Sender{Store: e.st, HTTP: e.sender.HTTP, Lease: e.sender.Lease, Timeout: e.sender.Timeout, DisableAfter: time.Hour,
		Retry: e.sender.Retry, PollInterval: e.sender.PollInterval, Workers: 4, Log: e.sender.Log}
	var wg sync.WaitGroup
	for _, s := range []*Sender{e.sender, other} {
		wg.Go(func() {
			if err := s.poll(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got := e.received()
	seen := map[string]int{}
	for _, id := range got {
		seen[id]++
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("%s sent %d times", id, n)
		}
	}
	if len(seen) != len(ids) {
		t.Fatalf("%d of %d deliveries sent", len(seen), len(ids))
	}
}

// TestPolledAttemptCutShortIsMadeAfterItsLease stops a replica while its POST is in flight: no
// outcome is recorded, and a poll once the claim's lease has passed makes the attempt again.
func TestPolledAttemptCutShortIsMadeAfterItsLease(t *testing.T) {
	t.Parallel()
	e := newSenderEnv(t)
	e.sender.Lease, e.sender.Timeout = time.Second, 200*time.Millisecond
	e.arrived, e.gate = make(chan struct{}, 1), make(chan struct{})
	ids := e.dueBacklog(t, e.sub.ID, 1)
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.sender.poll(ctx) }()
	<-e.arrived
	stop()
	if err := <-done; err != nil && ctx.Err() == nil {
		t.Fatal(err)
	}
	if d := e.delivery(t, ids[0]); d.Status != store.StatusPending || len(d.Attempts) != 0 {
		t.Fatalf("after the stop the delivery is %s with %d attempts; want pending, untouched", d.Status, len(d.Attempts))
	}
	e.mu.Lock()
	close(e.gate)
	e.arrived, e.gate = nil, nil
	e.mu.Unlock()
	time.Sleep(time.Until(e.delivery(t, ids[0]).NextAttemptAt.Add(e.sender.Lease)))
	if err := e.sender.poll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := e.delivery(t, ids[0]); d.Status != store.StatusSucceeded || len(d.Attempts) != 1 {
		t.Fatalf("after the lease the delivery is %s with %d attempts; want succeeded after one", d.Status, len(d.Attempts))
	}
	if got := e.received(); len(got) != 2 {
		t.Fatalf("receiver got %v; want the attempt cut short, then the one after its lease", got)
	}
}
