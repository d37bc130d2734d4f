package webhook

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// TestLaneDropsQueuedAttemptsOfAGoneSubscription queues five first attempts behind one the
// receiver holds, then deletes (or disables) the subscription before letting it go: nothing more
// is sent, and the queued deliveries fail unsent with the reason.
func TestLaneDropsQueuedAttemptsOfAGoneSubscription(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, reason string }{
		{"deleted", "subscription deleted"},
		{"disabled", "subscription disabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newSenderEnv(t)
			ctx := context.Background()
			e.arrived, e.gate = make(chan struct{}, 1), make(chan struct{})
			var batch []events.Event
			for i := range 6 {
				batch = append(batch, message(fmt.Sprintf("evt_%d", i)))
			}
			if err := e.fanout.Handle(ctx, batch); err != nil {
				t.Fatal(err)
			}
			<-e.arrived
			if tc.name == "deleted" {
				if err := e.subs.DeleteSubscription(ctx, e.sub); err != nil {
					t.Fatal(err)
				}
			} else {
				now := clock.Now()
				h := &store.SubscriptionHealth{ID: e.sub.ID, ObjectID: e.sub.ObjectID, DisabledAt: &now, DisabledReason: "test"}
				if err := e.subs.PutHealth(ctx, h); err != nil {
					t.Fatal(err)
				}
			}
			close(e.gate)
			e.sender.busy.Wait()
			if got := e.received(); len(got) != 1 || got[0] != "evt_0" {
				t.Fatalf("receiver got %v; want only the attempt in flight before the subscription was %s", got, tc.name)
			}
			for i := 1; i < 6; i++ {
				d := e.delivery(t, fmt.Sprintf("evt_%d.whk_1", i))
				if d.Status != store.StatusFailed || len(d.Attempts) != 1 || d.Attempts[0].Error != tc.reason {
					t.Errorf("%s: %s with %+v; want failed unsent (%q)", d.ID, d.Status, d.Attempts, tc.reason)
				}
			}
			if n := e.sender.lanesHeld(); n != 0 {
				t.Errorf("%d lane places still held after the lanes drained", n)
			}
		})
	}
}

// TestLanePastItsLeaseSendsEachDeliveryOnce queues more first attempts on one lane than a slow
// receiver can take within the lease: the lane leaves those it cannot finish in time to the
// poll, which makes them once, so the receiver gets every delivery exactly once (counted by
// webhook-id), even well after the lease.
func TestLanePastItsLeaseSendsEachDeliveryOnce(t *testing.T) {
	t.Parallel()
	e := newSenderEnv(t)
	e.sender.Lease, e.sender.Timeout = 2*time.Second, 500*time.Millisecond
	e.delay = 200 * time.Millisecond // 20 deliveries take 4 s on the lane, twice the lease
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.sender.Run(ctx) }()
	var batch []events.Event
	for i := range 20 {
		batch = append(batch, message(fmt.Sprintf("evt_%02d", i)))
	}
	if err := e.fanout.Handle(ctx, batch); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for _, ev := range batch {
		for e.delivery(t, ev.ID+".whk_1").Status != store.StatusSucceeded {
			if time.Now().After(deadline) {
				t.Fatalf("%s was never delivered", ev.ID)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	time.Sleep(e.sender.Lease + time.Second) // any second sending would have happened by now
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, id := range e.received() {
		count[id]++
	}
	for _, ev := range batch {
		if count[ev.ID] != 1 {
			t.Errorf("%s was sent %d times, want once", ev.ID, count[ev.ID])
		}
	}
}

// TestLanesAreBounded reserves places past each bound: a delivery without a place is left to the
// poll, and places given back are taken again.
func TestLanesAreBounded(t *testing.T) {
	t.Parallel()
	s := &Sender{Lanes: 2, LaneDepth: 3, LaneQueue: 5}
	for i := range 3 {
		if !s.Reserve("a") {
			t.Fatalf("place %d of lane a refused", i+1)
		}
	}
	if s.Reserve("a") {
		t.Fatal("a fourth place on a lane of depth 3 was given")
	}
	if !s.Reserve("b") || !s.Reserve("b") {
		t.Fatal("lane b refused a place")
	}
	if s.Reserve("b") {
		t.Fatal("a sixth place was given with a queue bound of 5")
	}
	s.Release("b")
	if s.Reserve("c") {
		t.Fatal("a third lane was opened with a bound of 2")
	}
	if !s.Reserve("b") {
		t.Fatal("a place given back was not given again")
	}
	s.Release("a")
	s.Release("a")
	s.Release("a")
	if !s.Reserve("c") {
		t.Fatal("a lane emptied of places was not closed")
	}
}

// lanesHeld is how many lane places are taken, for tests.
func (s *Sender) lanesHeld() int {
	s.lanes.mu.Lock()
	defer s.lanes.mu.Unlock()
	return s.lanes.queued
}
