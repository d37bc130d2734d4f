package controls_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/controls"
)

func newVersions(t *testing.T) *controls.Versions {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	return controls.New(rdb)
}

// TestGuardFollowsTheOwnerUntilTheProjectionCatchesUp: a control's version sends the question to
// the owner until the projection records that it applied that version; an unreachable owner is a
// 503 with Retry-After, never the projection's stale answer.
func TestGuardFollowsTheOwnerUntilTheProjectionCatchesUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v := newVersions(t)
	g := controls.NewGuard[bool](v, "feed-svc", controls.Blocks, 16)
	projected, owned, ownerUp, ownerCalls := false, false, true, 0
	projection := func(context.Context) (bool, error) { return projected, nil }
	owner := func(context.Context) (bool, error) {
		ownerCalls++
		if !ownerUp {
			return false, errors.New("connection refused")
		}
		return owned, nil
	}
	ask := func() (bool, error) { return g.Get(ctx, "obj_a", "obj_a|obj_b", projection, owner) }

	if got, err := ask(); err != nil || got || ownerCalls != 0 {
		t.Fatalf("no control yet: got %v, %v after %d owner calls; want the projection's false, no call", got, err, ownerCalls)
	}
	// The owner blocks: version 1, the projection has not seen it.
	n, err := v.Next(ctx, controls.Blocks, "obj_a")
	if err != nil || n != 1 {
		t.Fatalf("Next = %d, %v; want 1", n, err)
	}
	owned = true
	if got, err := ask(); err != nil || !got || ownerCalls != 1 {
		t.Fatalf("projection behind: got %v, %v after %d owner calls; want the owner's true", got, err, ownerCalls)
	}
	if got, _ := ask(); !got || ownerCalls != 1 {
		t.Fatalf("the same version asked again: got %v after %d owner calls; want the kept answer", got, ownerCalls)
	}
	// An unblock while the owner is unreachable: refused, never the projection's answer.
	if _, err := v.Next(ctx, controls.Blocks, "obj_a"); err != nil {
		t.Fatal(err)
	}
	ownerUp = false
	_, err = ask()
	if e := apierr.As(err); e.Status != http.StatusServiceUnavailable || e.RetryAfter <= 0 {
		t.Fatalf("owner unreachable while behind: got %v; want 503 with Retry-After", err)
	}
	// The projection applies version 2 (and a redelivered version 1 moves nothing back).
	projected = false
	if err := v.Applied(ctx, "feed-svc", controls.Blocks, "obj_a", 2); err != nil {
		t.Fatal(err)
	}
	if err := v.Applied(ctx, "feed-svc", controls.Blocks, "obj_a", 1); err != nil {
		t.Fatal(err)
	}
	calls := ownerCalls
	if got, err := ask(); err != nil || got || ownerCalls != calls {
		t.Fatalf("projection caught up: got %v, %v, owner asked %d more times; want the projection's false", got, err, ownerCalls-calls)
	}
	// Another service's projection is its own: graph-svc is still behind.
	if _, behind, err := v.Behind(ctx, "graph-svc", controls.Blocks, "obj_a"); err != nil || !behind {
		t.Fatalf("graph-svc behind = %v, %v; want true", behind, err)
	}
	// Raise moves a version up only.
	if err := v.Raise(ctx, controls.Rules, "obj_r", 7); err != nil {
		t.Fatal(err)
	}
	if err := v.Raise(ctx, controls.Rules, "obj_r", 3); err != nil {
		t.Fatal(err)
	}
	if cur, _, err := v.Behind(ctx, "mailbox-svc", controls.Rules, "obj_r"); err != nil || cur != 7 {
		t.Fatalf("rules version = %d, %v; want 7", cur, err)
	}
}
