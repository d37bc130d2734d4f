package freshness_test

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/pkg/freshness"
)

// TestReaderSeesTheWorstFreshReport: the reader reports the group furthest behind among fresh
// reports of every replica, leaves out stale reports and groups it was not told to watch, and
// a withdrawn replica no longer counts.
func TestReaderSeesTheWorstFreshReport(t *testing.T) {
	t.Parallel()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx, now := context.Background(), time.Now()
	a, b, gone := freshness.NewReporter(rdb), freshness.NewReporter(rdb), freshness.NewReporter(rdb)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(a.Report(ctx, map[string]time.Duration{"mailbox-svc.lists": 300 * time.Millisecond, "graph-svc.messages": 0}, now))
	must(b.Report(ctx, map[string]time.Duration{"mailbox-svc.lists": 3 * time.Second}, now))
	must(gone.Report(ctx, map[string]time.Duration{"feed-svc.network": time.Hour}, now.Add(-time.Minute)))

	got := freshness.NewReader(rdb, nil).Worst(ctx, now)
	if got.Group != "mailbox-svc.lists" || got.Lag != 3*time.Second {
		t.Fatalf("worst = %+v, want mailbox-svc.lists 3s (the stale report of an hour left out)", got)
	}
	if got := freshness.NewReader(rdb, []string{"graph-svc.messages"}).Worst(ctx, now); got.Lag != 0 {
		t.Fatalf("worst of graph-svc.messages alone = %+v, want 0", got)
	}
	must(b.Withdraw(ctx, []string{"mailbox-svc.lists"}))
	if got := freshness.NewReader(rdb, nil).Worst(ctx, now); got.Lag != 300*time.Millisecond {
		t.Fatalf("worst after the lagging replica withdrew = %+v, want 300ms", got)
	}
}
