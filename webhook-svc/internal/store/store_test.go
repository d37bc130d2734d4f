package store

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// TestClaimIsWonOnce races replicas for one attempt on the embedded FerretDB: exactly one wins;
// the sweep deletes the claims whose lease ended before its cutoff.
func TestClaimIsWonOnce(t *testing.T) {
	t.Parallel()
	st := New(testkit.Database(t, testkit.Backends(t), "webhook"))
	ctx := context.Background()
	end := time.Now().Add(time.Minute)
	var wins atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			won, err := st.Claim(ctx, ClaimKey("dlv_1", 2, 1, end))
			if err != nil {
				t.Error(err)
			}
			if len(won) == 1 && won[0] {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if n := wins.Load(); n != 1 {
		t.Fatalf("%d replicas won the same claim, want 1", n)
	}
	// A page's claims go in one insert: the slot taken already is lost, the others won.
	won, err := st.Claim(ctx, ClaimKey("dlv_1", 2, 1, end), ClaimKey("dlv_1", 2, 2, end.Add(time.Minute)), ClaimKey("dlv_2", 1, 1, end))
	if err != nil || len(won) != 3 || won[0] || !won[1] || !won[2] {
		t.Fatalf("claims of a taken slot, the next slot and another delivery: won %v, %v; want false, true, true", won, err)
	}
	if n, err := st.SweepClaims(ctx, end.Add(time.Second)); err != nil || n != 2 {
		t.Fatalf("the sweep deleted %d, %v; want the claims whose lease ended", n, err)
	}
	if won, err := st.Claim(ctx, ClaimKey("dlv_1", 2, 2, end.Add(time.Minute))); err != nil || won[0] {
		t.Fatalf("the claim of the next slot after the sweep: won %v, %v; want it kept", won, err)
	}
}

// TestDeliveryInsertedOnce checks that a redelivered event inserts no second delivery.
func TestDeliveryInsertedOnce(t *testing.T) {
	t.Parallel()
	st := New(testkit.Database(t, testkit.Backends(t), "webhook"))
	ctx := context.Background()
	due := time.Now()
	d := &Delivery{ID: "evt_1.whk_1", SubscriptionID: "whk_1", EventID: "evt_1", Status: StatusPending, NextAttemptAt: &due, Attempts: []Attempt{}}
	for i, want := range []bool{true, false} {
		if inserted, err := st.InsertDeliveries(ctx, []*Delivery{d}); err != nil || inserted[0] != want {
			t.Fatalf("insert %d: %v, %v; want %v", i, inserted, err, want)
		}
	}
	if got, err := st.Delivery(ctx, d.ID); err != nil || got.Status != StatusPending {
		t.Fatalf("delivery = %v, %v", got, err)
	}
}

// TestAttemptsRecordedTogether checks the writes of a page of attempts: the deliveries rewritten
// each as given, and their log lines inserted in one, each in its subscription's
// log and, for an attempt that ended its delivery, in its outcome's list.
func TestAttemptsRecordedTogether(t *testing.T) {
	t.Parallel()
	st := New(testkit.Database(t, testkit.Backends(t), "webhook"))
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	retry := now.Add(5 * time.Second)
	ds := []*Delivery{
		{ID: "evt_1.whk_1", SubscriptionID: "whk_1", EventID: "evt_1", Status: StatusPending, NextAttemptAt: &now, Attempts: []Attempt{}},
		{ID: "evt_2.whk_2", SubscriptionID: "whk_2", EventID: "evt_2", Status: StatusPending, NextAttemptAt: &now, Attempts: []Attempt{}},
	}
	if _, err := st.InsertDeliveries(ctx, ds); err != nil {
		t.Fatal(err)
	}
	ds[0].Status, ds[0].NextAttemptAt, ds[0].Attempts = StatusSucceeded, nil, []Attempt{{At: now, StatusCode: 200}}
	ds[1].NextAttemptAt, ds[1].Attempts = &retry, []Attempt{{At: now, StatusCode: 503}}
	if err := st.ReplaceDeliveries(ctx, ds...); err != nil {
		t.Fatal(err)
	}
	found, err := st.DeliveriesByID(ctx, []string{ds[0].ID, ds[1].ID})
	if err != nil {
		t.Fatal(err)
	}
	if d := found[ds[0].ID]; d.Status != StatusSucceeded || d.NextAttemptAt != nil || len(d.Attempts) != 1 {
		t.Errorf("first delivery after the rewrite: %+v", d)
	}
	if d := found[ds[1].ID]; d.Status != StatusPending || !d.NextAttemptAt.Equal(retry) || d.Attempts[0].StatusCode != 503 {
		t.Errorf("second delivery after the rewrite: %+v", d)
	}
	err = st.LogAttempts(ctx,
		LogLine{SubscriptionID: "whk_1", AttemptEntry: AttemptEntry{DeliveryID: ds[0].ID, Attempt: 1, Outcome: OutcomeSucceeded, StatusCode: 200, At: now}},
		LogLine{SubscriptionID: "whk_2", AttemptEntry: AttemptEntry{DeliveryID: ds[1].ID, Attempt: 1, Outcome: OutcomeRetrying, StatusCode: 503, At: now}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sub, outcome string
		want         int
	}{{"whk_1", "", 1}, {"whk_1", OutcomeSucceeded, 1}, {"whk_2", "", 1}, {"whk_2", OutcomeFailed, 0}, {"whk_2", OutcomeSucceeded, 0}} {
		got, err := st.Attempts(ctx, AttemptRange{SubscriptionID: c.sub, Outcome: c.outcome}, 10, false)
		if err != nil || len(got) != c.want {
			t.Errorf("log of %s, list %q: %d lines, %v; want %d", c.sub, c.outcome, len(got), err, c.want)
		}
	}
}
