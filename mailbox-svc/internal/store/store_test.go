package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func newStore(t *testing.T) *store.Store {
	s, _ := newStoreAndOutbox(t)
	return s
}

// newStoreAndOutbox returns a store and the outbox its deletions keep events in (never run: the
// tests look at what is staged).
func newStoreAndOutbox(t *testing.T) (*store.Store, *events.Outbox) {
	t.Helper()
	db := testkit.Database(t, testkit.Backends(t), "mailbox")
	if err := mongox.EnsureIndexes(context.Background(), db, store.Indexes); err != nil {
		t.Fatal(err)
	}
	return store.New(db), events.NewOutbox(db, nil, testkit.Logger(t), events.OutboxOptions{})
}

func TestIdempotencyRecords(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	now := clock.Now()
	if _, err := s.Idempotency(ctx, "obj_a:k"); !errors.Is(err, mongox.ErrNotFound) {
		t.Fatalf("a missing record: %v, want mongox.ErrNotFound", err)
	}

	// Of concurrent beginners, every one is handed the same record.
	const n = 10
	held := make([]*store.Idempotency, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			rec := &store.Idempotency{ID: "obj_a:k", Fingerprint: string(rune('a' + i)), CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
			got, err := s.BeginIdempotent(ctx, rec)
			if err != nil {
				t.Error(err)
				return
			}
			held[i] = got
		})
	}
	wg.Wait()
	for i := range n {
		if held[i] == nil || held[i].Fingerprint != held[0].Fingerprint {
			t.Fatalf("beginner %d holds %+v, beginner 0 holds %+v", i, held[i], held[0])
		}
	}

	// An expired record not yet swept gives way to a new one; a live one does not.
	old := &store.Idempotency{ID: "obj_a:old", Fingerprint: "old", CreatedAt: now.Add(-2 * time.Hour), ExpiresAt: now.Add(-time.Hour)}
	if _, err := s.BeginIdempotent(ctx, old); err != nil {
		t.Fatal(err)
	}
	fresh := &store.Idempotency{ID: "obj_a:old", Fingerprint: "new", CreatedAt: now, ExpiresAt: now.Add(time.Hour)}
	if got, err := s.BeginIdempotent(ctx, fresh); err != nil || got != fresh {
		t.Fatalf("begin over an expired record = %+v, %v; want the new record", got, err)
	}
	if err := s.FinishIdempotent(ctx, "obj_a:old", &store.Message{ID: "msg_1"}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Idempotency(ctx, "obj_a:old"); err != nil || !got.Done || got.Fingerprint != "new" {
		t.Fatalf("finished record = %+v, %v", got, err)
	}
	swept, err := s.SweepIdempotency(ctx, now.Add(2*time.Hour))
	if err != nil || swept != 2 {
		t.Fatalf("sweep = %d, %v; want both records gone", swept, err)
	}
}

// TestMessagePlaces: a message takes the next free place of its thread; a place taken by another
// message is refused, the same message again is not an error; the last message, a page and a
// message by id read back what was stored.
func TestMessagePlaces(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	now := clock.Now()
	th := &store.Thread{ID: "thr_1", Participants: []string{"obj_a", "obj_b"}, Status: "open", CreatedAt: now, LastMessageAt: now}
	if _, err := s.InsertThread(ctx, th); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		m := &store.Message{ID: fmt.Sprintf("msg_%d", i+1), ThreadID: th.ID, Seq: int64(i + 1), FromID: "obj_a", ToID: "obj_b", Kind: "note", Body: "x", CreatedAt: now}
		if created, err := s.InsertMessage(ctx, m); err != nil || !created {
			t.Fatalf("insert %s: %v, %v", m.ID, created, err)
		}
		if created, err := s.InsertMessage(ctx, m); err != nil || created {
			t.Fatalf("insert %s again: %v, %v; want false without error", m.ID, created, err)
		}
	}
	taken := &store.Message{ID: "msg_other", ThreadID: th.ID, Seq: 3, FromID: "obj_b", ToID: "obj_a", Kind: "note", Body: "y", CreatedAt: now}
	if _, err := s.InsertMessage(ctx, taken); !errors.Is(err, store.ErrSeqTaken) {
		t.Fatalf("insert at a taken place: %v, want ErrSeqTaken", err)
	}
	if _, err := s.Message(ctx, "msg_other"); !errors.Is(err, mongox.ErrNotFound) {
		t.Fatalf("a refused message reads back: %v", err)
	}
	last, err := s.LastMessage(ctx, th.ID)
	if err != nil || last.ID != "msg_3" || last.Seq != 3 {
		t.Fatalf("last message = %+v, %v", last, err)
	}
	page, more, err := s.ThreadPage(ctx, th.ID, "", 2)
	if err != nil || !more || len(page) != 2 || page[0].ID != "msg_1" || page[1].ID != "msg_2" {
		t.Fatalf("first page = %+v, %v, %v", page, more, err)
	}
	page, more, err = s.ThreadPage(ctx, th.ID, page[1].Key, 2)
	if err != nil || more || len(page) != 1 || page[0].ID != "msg_3" {
		t.Fatalf("second page = %+v, %v, %v", page, more, err)
	}
	if m, err := s.Message(ctx, "msg_2"); err != nil || m.Seq != 2 || m.ThreadID != th.ID {
		t.Fatalf("message by id = %+v, %v", m, err)
	}
}

func TestHashes(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	if err := s.RememberHash(ctx, "obj_a", "svc_first"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetHash(ctx, "obj_a", "svc_second"); err != nil {
		t.Fatal(err)
	}
	// A send holding a resolution from before the change cannot undo it.
	if err := s.RememberHash(ctx, "obj_a", "svc_first"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Hashes(ctx, []string{"obj_a", "obj_unknown"})
	if err != nil || len(got) != 1 || got["obj_a"] != "svc_second" {
		t.Fatalf("hashes = %v, %v", got, err)
	}
}

// TestParticipants: a thread's participants, read by the process that opened it and by another.
func TestParticipants(t *testing.T) {
	t.Parallel()
	db := testkit.Database(t, testkit.Backends(t), "mailbox")
	ctx := context.Background()
	now := clock.Now()
	th := &store.Thread{ID: "thr_p", Participants: []string{"obj_a", "obj_b"}, Status: "open", CreatedAt: now, LastMessageAt: now}
	if _, err := store.New(db).InsertThread(ctx, th); err != nil {
		t.Fatal(err)
	}
	for i, s := range []*store.Store{store.New(db), store.New(db)} {
		for range 2 {
			p, err := s.Participants(ctx, th.ID)
			if err != nil || !store.Between(p, "obj_b", "obj_a") || store.Between(p, "obj_a", "obj_c") {
				t.Fatalf("store %d: participants = %v, %v", i, p, err)
			}
		}
	}
}

func TestThreadStatusOfAMissingThread(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	if _, err := s.SetThreadStatus(context.Background(), "thr_missing", "archived"); !errors.Is(err, mongox.ErrNotFound) {
		t.Fatalf("got %v, want mongox.ErrNotFound", err)
	}
	if _, err := s.Thread(context.Background(), "thr_missing"); !errors.Is(err, mongox.ErrNotFound) {
		t.Fatalf("got %v, want mongox.ErrNotFound", err)
	}
	if _, err := s.Participants(context.Background(), "thr_missing"); !errors.Is(err, mongox.ErrNotFound) {
		t.Fatalf("participants: got %v, want mongox.ErrNotFound", err)
	}
}

// TestLiftedBlocks: a block is lifted by its Unblock, before the block document is deleted; a new
// block gives the lifted one way, and blocks stored before instances are lifted the same way.
func TestLiftedBlocks(t *testing.T) {
	t.Parallel()
	s, outbox := newStoreAndOutbox(t)
	ctx := context.Background()
	now := clock.Now()
	blocked := func(want bool) {
		t.Helper()
		got, err := s.IsBlocked(ctx, "obj_r", "obj_s")
		if err != nil || got != want {
			t.Fatalf("IsBlocked = %v, %v; want %v", got, err, want)
		}
	}
	first := &store.SenderBlock{ID: store.BlockID("obj_r", "obj_s"), RecipientID: "obj_r", SenderID: "obj_s", CreatedAt: now, Instance: "blk_1"}
	if created, err := s.InsertBlock(ctx, first, outbox); err != nil || !created {
		t.Fatalf("first block: %v, %v", created, err)
	}
	blocked(true)
	if created, err := s.InsertUnblock(ctx, &store.Unblock{ID: first.UnblockID(), RecipientID: "obj_r", SenderID: "obj_s", UnblockedAt: now}); err != nil || !created {
		t.Fatalf("lift: %v, %v", created, err)
	}
	blocked(false) // lifted, not yet deleted

	second := &store.SenderBlock{ID: first.ID, RecipientID: "obj_r", SenderID: "obj_s", CreatedAt: now, Instance: "blk_2"}
	if created, err := s.InsertBlock(ctx, second, outbox); err != nil || !created {
		t.Fatalf("a block over a lifted one: %v, %v; want created", created, err)
	}
	blocked(true)
	if err := s.DeleteBlock(ctx, first, outbox); err != nil { // a late tidy-up of the first block
		t.Fatal(err)
	}
	blocked(true)
	if created, err := s.InsertBlock(ctx, &store.SenderBlock{ID: first.ID, Instance: "blk_3", CreatedAt: now}, outbox); err != nil || created {
		t.Fatalf("a block over a live one: %v, %v; want not created", created, err)
	}

	// A block without an instance (stored before instances existed).
	legacy := &store.SenderBlock{ID: store.BlockID("obj_r", "obj_t"), RecipientID: "obj_r", SenderID: "obj_t", CreatedAt: now.Add(time.Second)}
	if _, err := s.InsertBlock(ctx, legacy, outbox); err != nil {
		t.Fatal(err)
	}
	if _, err := s.InsertUnblock(ctx, &store.Unblock{ID: legacy.UnblockID()}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteBlock(ctx, legacy, outbox); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Block(ctx, "obj_r", "obj_t"); !errors.Is(err, mongox.ErrNotFound) {
		t.Fatalf("the legacy block after its deletion: %v", err)
	}
	blocked(true)
}

// TestMailboxPageSkipsReplacedEntries: an older entry of a thread that a send of the same instant
// left behind is shown once (its newest), deleted, and the page still comes back full.
func TestMailboxPageSkipsReplacedEntries(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	now := clock.Now()
	var entries []store.BoxEntry
	for i := range 4 {
		th := &store.Thread{ID: fmt.Sprintf("thr_%d", i), Participants: []string{"obj_a", "obj_b"}}
		entries = append(entries, store.BoxEntries(th, "open", now.Add(time.Duration(i)*time.Second), 1, 0)...)
	}
	// thr_3 moved up twice; its entry of the first move was not deleted.
	stale := store.BoxEntries(&store.Thread{ID: "thr_3", Participants: []string{"obj_a", "obj_b"}}, "open", now.Add(1500*time.Millisecond), 1, 0)
	if err := s.PutBoxEntries(ctx, append(entries, stale...), nil); err != nil {
		t.Fatal(err)
	}
	page, next, err := s.Mailbox(ctx, "obj_b", "", "", 3)
	if err != nil || len(page) != 3 || next == "" {
		t.Fatalf("first page %+v, next %q, %v; want 3 threads and a next page", page, next, err)
	}
	if got := []string{page[0].ThreadID, page[1].ThreadID, page[2].ThreadID}; fmt.Sprint(got) != "[thr_3 thr_2 thr_1]" {
		t.Fatalf("first page %v, want thr_3 thr_2 thr_1", got)
	}
	rest, next, err := s.Mailbox(ctx, "obj_b", "", next, 3)
	if err != nil || len(rest) != 1 || rest[0].ThreadID != "thr_0" || next != "" {
		t.Fatalf("second page %+v, next %q, %v; want thr_0 alone", rest, next, err)
	}
	if open, _, err := s.Mailbox(ctx, "obj_b", "open", "", 10); err != nil || len(open) != 4 {
		t.Fatalf("open threads %+v, %v; want 4, the stale entry deleted", open, err)
	}
}
