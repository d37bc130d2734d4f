package mailbox_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/svcdev/svc/mailbox-svc/internal/mailbox"
	"github.com/svcdev/svc/pkg/events"
)

func TestBlockAndUnblock(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	owner := mailbox.Owner{ObjectID: bob.ObjectID, Hash: bob.Hash}

	// Blocking through any hash of the sender blocks the object, once.
	for _, hash := range []string{"svc_alice", "svc_alice"} {
		got, err := f.blocks.Block(ctx, "req", owner, hash)
		if err != nil || got != "svc_alice" {
			t.Fatalf("Block(%s) = %q, %v", hash, got, err)
		}
	}
	if got := f.outbox.types(); !slices.Equal(got, []string{events.SenderBlocked}) {
		t.Fatalf("events after blocking twice = %v, want one sender.blocked", got)
	}
	list, err := f.blocks.BlockedHashes(ctx, bob.ObjectID)
	if err != nil || !slices.Equal(list, []string{"svc_alice"}) {
		t.Fatalf("blocked list = %v, %v", list, err)
	}
	_, err = f.blocks.Block(ctx, "req", owner, "svc_bobold")
	wantStatus(t, err, http.StatusBadRequest) // itself, through an old hash
	_, err = f.blocks.Block(ctx, "req", owner, "not a hash")
	wantStatus(t, err, http.StatusBadRequest)
	_, err = f.blocks.Block(ctx, "req", owner, "svc_nobody")
	wantStatus(t, err, http.StatusNotFound)

	if got, err := f.blocks.Unblock(ctx, "req", owner, "svc_alice"); err != nil || got != "svc_alice" {
		t.Fatalf("Unblock = %q, %v", got, err)
	}
	_, err = f.blocks.Unblock(ctx, "req", owner, "svc_alice")
	wantStatus(t, err, http.StatusNotFound)
	_, err = f.blocks.Unblock(ctx, "req", owner, "svc_carol")
	wantStatus(t, err, http.StatusNotFound)
	if got := f.outbox.types(); !slices.Equal(got, []string{events.SenderBlocked, events.SenderUnblocked}) {
		t.Fatalf("events = %v, want sender.blocked then one sender.unblocked", got)
	}
	if list, err := f.blocks.BlockedHashes(ctx, bob.ObjectID); err != nil || len(list) != 0 || list == nil {
		t.Fatalf("blocked list after unblocking = %v, %v; want empty", list, err)
	}
	if _, err := f.sender.Send(ctx, "req", note("svc_alice", "svc_bob", "back"), ""); err != nil {
		t.Fatalf("a send after the unblock: %v", err)
	}
}
