package profile_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
)

// TestPutMemoryIfMatch: a write naming the current memory version succeeds, one naming an older
// version is 412 and writes nothing; of concurrent writers holding one version, exactly one wins.
func TestPutMemoryIfMatch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	p, err := f.svc.PutMemory(ctx, f.t, "first")
	if err != nil {
		t.Fatal(err)
	}
	v := p.MemoryVersion
	p2, err := f.svc.PutMemoryIf(ctx, f.t, "second", &v)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.PutMemoryIf(ctx, f.t, "stale", &v); status(err) != http.StatusPreconditionFailed {
		t.Fatalf("a stale If-Match answered %v, want 412", err)
	}
	if cur, err := f.svc.Profile(ctx, f.t.ObjectID); err != nil || cur.Memory != "second" {
		t.Fatalf("memory after a stale write %q (%v)", cur.Memory, err)
	}
	held := p2.MemoryVersion
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, refused := 0, 0
	for range 4 {
		wg.Go(func() {
			_, err := f.svc.PutMemoryIf(ctx, f.t, "race", &held)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case status(err) == http.StatusPreconditionFailed || status(err) == http.StatusConflict:
				refused++
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if won != 1 || refused != 3 {
		t.Fatalf("%d writers holding one version won, %d refused; want 1 and 3", won, refused)
	}
}
