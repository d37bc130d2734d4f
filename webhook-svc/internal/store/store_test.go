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
			if won {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if n := wins.Load(); n != 1 {
		t.Fatalf("%d replicas won the same claim, want 1", n)
	}
	if won, err := st.Claim(ctx, ClaimKey("dlv_1", 2, 2, end.Add(time.Minute))); err != nil || !won {
		t.Fatalf("the next slot: won %v, %v", won, err)
	}
	if n, err := st.SweepClaims(ctx, end.Add(time.Second)); err != nil || n != 1 {
		t.Fatalf("the sweep deleted %d, %v; want the claim whose lease ended", n, err)
	}
	if won, err := st.Claim(ctx, ClaimKey("dlv_1", 2, 2, end.Add(time.Minute))); err != nil || won {
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
