package mailbox_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/mailbox-svc/internal/mailbox"
	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/testkit"
	"github.com/svcdev/svc/pkg/versions"
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
	if blocked, err := f.store.IsBlocked(ctx, bob.ObjectID, alice.ObjectID); err != nil || !blocked {
		t.Fatalf("alice blocked = %v, %v; want true", blocked, err)
	}
	_, err := f.blocks.Block(ctx, "req", owner, "svc_bobold")
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
	if blocked, err := f.store.IsBlocked(ctx, bob.ObjectID, alice.ObjectID); err != nil || blocked {
		t.Fatalf("alice blocked after the unblock = %v, %v; want false", blocked, err)
	}
	if _, err := f.sender.Send(ctx, "req", note("svc_alice", "svc_bob", "back"), ""); err != nil {
		t.Fatalf("a send after the unblock: %v", err)
	}
}

// failingWrites is the real store with one of an unblock's writes failing, as a lost connection
// or a crash between two writes would.
type failingWrites struct {
	*store.Store
	mu     sync.Mutex
	writes int
	failAt int // the write (1-based) that fails, once
}

func (f *failingWrites) fail() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes++
	if f.writes == f.failAt {
		return errors.New("connection lost")
	}
	return nil
}

func (f *failingWrites) DeleteBlock(ctx context.Context, b *store.SenderBlock, outbox events.Stager) error {
	if err := f.fail(); err != nil {
		return err
	}
	return f.Store.DeleteBlock(ctx, b, outbox)
}

func (f *failingWrites) InsertUnblock(ctx context.Context, u *store.Unblock) (bool, error) {
	if err := f.fail(); err != nil {
		return false, err
	}
	return f.Store.InsertUnblock(ctx, u)
}

// TestUnblockSurvivesAFailureBetweenItsWrites: whichever write of an unblock fails, a retry
// lifts the block, and sender.unblocked is recorded exactly once.
func TestUnblockSurvivesAFailureBetweenItsWrites(t *testing.T) {
	t.Parallel()
	for _, failAt := range []int{1, 2} {
		f := newFixture(t)
		ctx := context.Background()
		owner := mailbox.Owner{ObjectID: bob.ObjectID, Hash: bob.Hash}
		if _, err := f.blocks.Block(ctx, "req", owner, "svc_alice"); err != nil {
			t.Fatal(err)
		}
		blocks := &mailbox.Blocks{Store: &failingWrites{Store: f.store, failAt: failAt}, Names: f.blocks.Names, Outbox: f.outbox}
		if _, err := blocks.Unblock(ctx, "req", owner, "svc_alice"); err == nil {
			t.Fatalf("write %d failed and the unblock answered no error", failAt)
		}
		if got, err := blocks.Unblock(ctx, "req", owner, "svc_alice"); err != nil || got != "svc_alice" {
			t.Fatalf("write %d failed; the retry answered %q, %v", failAt, got, err)
		}
		if blocked, err := f.store.IsBlocked(ctx, bob.ObjectID, alice.ObjectID); err != nil || blocked {
			t.Fatalf("write %d failed; after the retry blocked = %v, %v", failAt, blocked, err)
		}
		if n := f.count(t, store.Unblocks); n != 1 {
			t.Fatalf("write %d failed; %d unblock records, want 1 (one sender.unblocked)", failAt, n)
		}
		if got := f.outbox.types(); !slices.Equal(got, []string{events.SenderBlocked, events.SenderUnblocked}) {
			t.Fatalf("write %d failed; events handed to the relay = %v", failAt, got)
		}
	}
}

// TestConcurrentUnblocksAndBlocks: concurrent unblocks of one block record one lifting, and a
// block after them holds.
func TestConcurrentUnblocksAndBlocks(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	owner := mailbox.Owner{ObjectID: bob.ObjectID, Hash: bob.Hash}
	if _, err := f.blocks.Block(ctx, "req", owner, "svc_alice"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			_, err := f.blocks.Unblock(ctx, "req", owner, "svc_alice")
			if err != nil && httpx.AsError(err).Status != http.StatusNotFound {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := f.count(t, store.Unblocks); n != 1 {
		t.Fatalf("%d unblock records after concurrent unblocks, want 1", n)
	}
	if _, err := f.blocks.Block(ctx, "req", owner, "svc_alice"); err != nil {
		t.Fatal(err)
	}
	if blocked, err := f.store.IsBlocked(ctx, bob.ObjectID, alice.ObjectID); err != nil || !blocked {
		t.Fatalf("blocked again = %v, %v; want true", blocked, err)
	}
	if _, err := f.blocks.Unblock(ctx, "req", owner, "svc_alice"); err != nil {
		t.Fatal(err)
	}
	if got := f.outbox.types(); !slices.Equal(got, []string{events.SenderBlocked, events.SenderUnblocked, events.SenderBlocked, events.SenderUnblocked}) {
		t.Fatalf("events = %v", got)
	}
}

// countingBlocks is the real store, counting the block checks a send makes of it.
type countingBlocks struct {
	*store.Store
	checks atomic.Int64
}

func (c *countingBlocks) IsBlocked(ctx context.Context, recipientID, senderID string) (bool, error) {
	c.checks.Add(1)
	return c.Store.IsBlocked(ctx, recipientID, senderID)
}

// TestBlockCacheFollowsEveryBlockAndUnblock: with two replicas' caches on one Redis, a send whose
// answer is cached reads no block from the store, and a block or an unblock made through one
// replica holds for the very next send through the other.
func TestBlockCacheFollowsEveryBlockAndUnblock(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	env := testkit.Backends(t)
	rdb := redis.NewClient(must(redis.ParseURL(env.RedisURL)))
	t.Cleanup(func() { _ = rdb.Close() })
	replica := func() *mailbox.BlockCache {
		return mailbox.NewBlockCache(versions.New(rdb, testkit.Logger(t), env.Name+":blocks:", time.Hour), 100)
	}
	counted := &countingBlocks{Store: f.store}
	sender := &mailbox.Sender{Store: counted, Names: f.names, Outbox: f.outbox, IdempotencyTTL: time.Hour, Blocked: replica(), Log: f.sender.Log}
	blocks := *f.blocks
	blocks.Cache = replica()
	owner := mailbox.Owner{ObjectID: bob.ObjectID, Hash: bob.Hash}
	send := func() error {
		_, err := sender.Send(ctx, "req", note("svc_alice", "svc_bob", "hello"), "")
		return err
	}

	for range 3 {
		if err := send(); err != nil {
			t.Fatal(err)
		}
	}
	if n := counted.checks.Load(); n != 1 {
		t.Errorf("three sends between an unchanged pair read the store's blocks %d times, want once", n)
	}
	if _, err := blocks.Block(ctx, "req", owner, "svc_alice"); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, send(), http.StatusForbidden)
	wantStatus(t, send(), http.StatusForbidden)
	if _, err := blocks.Unblock(ctx, "req", owner, "svc_alice"); err != nil {
		t.Fatal(err)
	}
	if err := send(); err != nil {
		t.Fatalf("a send right after the unblock: %v", err)
	}
	if n := counted.checks.Load(); n != 3 {
		t.Errorf("the store's blocks were read %d times, want 3: once per change of bob's blocks", n)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
