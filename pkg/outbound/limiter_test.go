package outbound

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLimiterBoundsWork: of many concurrent callers, at most Max run at once, Queue wait their
// turn, and the rest are refused at once with a BusyError carrying a Retry-After.
func TestLimiterBoundsWork(t *testing.T) {
	t.Parallel()
	l, err := NewLimiter(LimiterOptions{Max: 2, Queue: 2, Wait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var running, peak, done, refused atomic.Int64
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			release, err := l.Acquire(context.Background())
			var busy *BusyError
			if errors.As(err, &busy) {
				if !errors.Is(err, ErrBusy) || busy.RetryAfter < time.Second {
					t.Errorf("refusal %v lacks ErrBusy or a Retry-After", err)
				}
				refused.Add(1)
				return
			}
			if err != nil {
				t.Error(err)
				return
			}
			n := running.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			<-gate
			running.Add(-1)
			done.Add(1)
			release()
		})
	}
	// Let the callers reach the limiter, then open the gate.
	deadline := time.Now().Add(5 * time.Second)
	for refused.Load() < 6 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	close(gate)
	wg.Wait()
	if peak.Load() > 2 || done.Load() != 4 || refused.Load() != 6 {
		t.Fatalf("peak %d running, %d done, %d refused; want at most 2, 4 and 6", peak.Load(), done.Load(), refused.Load())
	}
}

// TestLimiterQueueWaitRunsOut: a queued caller whose wait runs out is refused.
func TestLimiterQueueWaitRunsOut(t *testing.T) {
	t.Parallel()
	l, err := NewLimiter(LimiterOptions{Max: 1, Queue: 1, Wait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	release, err := l.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(context.Background()); !errors.Is(err, ErrBusy) {
		t.Fatalf("a caller queued past its wait got %v, want ErrBusy", err)
	}
	release()
	r2, err := l.Acquire(context.Background())
	if err != nil {
		t.Fatalf("after a release: %v", err)
	}
	r2()
}
