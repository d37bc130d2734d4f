package ratelimit

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// TestPollerClaimIsOneStep: of concurrent claims of one key exactly one is granted, the others
// learn how long to wait; a release gives back only its own claim.
func TestPollerClaimIsOneStep(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	p := NewPoller(rdb, 15*time.Minute)
	ctx := context.Background()

	var mu sync.Mutex
	var tokens []string
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			token, wait := p.Claim(ctx, "caller|feed")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case wait == 0 && token != "":
				tokens = append(tokens, token)
			case wait <= 0 || wait > 15*time.Minute:
				t.Errorf("a refused claim waits %s, want within the interval", wait)
			}
		}()
	}
	wg.Wait()
	if len(tokens) != 1 {
		t.Fatalf("%d of 32 concurrent claims granted, want 1", len(tokens))
	}
	p.Release(ctx, "caller|feed", "not-the-token")
	if _, wait := p.Claim(ctx, "caller|feed"); wait == 0 {
		t.Fatal("a release with another token gave the claim back")
	}
	p.Release(ctx, "caller|feed", tokens[0])
	if token, wait := p.Claim(ctx, "caller|feed"); wait != 0 || token == "" {
		t.Fatalf("after its release the key is claimed again: token %q, wait %s", token, wait)
	}
	if token, wait := NewPoller(rdb, 0).Claim(ctx, "caller|feed"); token != "" || wait != 0 {
		t.Fatalf("a disabled poller claimed: %q %s", token, wait)
	}
}
