package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
)

// TestBackfillListsOnce: threads and messages stored by a release without lists (no links, no
// positions) are listed by the first start's backfill, in stored order, with their counts and
// mailbox places; the marker keeps a later start from running it again.
func TestBackfillListsOnce(t *testing.T) {
	t.Parallel()
	s, outbox := newStoreAndOutbox(t)
	ctx := context.Background()
	now := clock.Now().Add(-time.Hour)
	old := func(id, a, b string, at time.Time, bodies ...string) {
		t.Helper()
		th := &store.Thread{ID: id, Participants: []string{a, b}, Status: "open", CreatedAt: at, LastMessageAt: at.Add(time.Duration(len(bodies)) * time.Second)}
		if _, err := s.InsertThread(ctx, th); err != nil {
			t.Fatal(err)
		}
		for i, body := range bodies {
			from, to := a, b
			if i%2 == 1 {
				from, to = b, a
			}
			m := &store.Message{ID: fmt.Sprintf("msg_%s_%d", id, i), ThreadID: id, FromID: from, ToID: to, Kind: "note", Body: body,
				CreatedAt: at.Add(time.Duration(i) * time.Second)}
			if _, err := s.InsertMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	old("thr_old1", "obj_a", "obj_b", now, "one", "two", "three")
	old("thr_old2", "obj_c", "obj_b", now.Add(time.Minute), "hello")
	block := &store.SenderBlock{ID: store.BlockID("obj_b", "obj_c"), RecipientID: "obj_b", SenderID: "obj_c", CreatedAt: now, Instance: "blk_1"}
	if _, err := s.InsertBlock(ctx, block, outbox); err != nil {
		t.Fatal(err)
	}

	n, err := s.BackfillLists(ctx)
	if err != nil || n != 4+2+1 {
		t.Fatalf("backfill went through %d documents, %v; want 7", n, err)
	}
	rows, next, err := s.Mailbox(ctx, "obj_b", "", 0, 10)
	if err != nil || len(rows) != 2 || next != 0 {
		t.Fatalf("obj_b's mailbox after the backfill: %+v, %d, %v", rows, next, err)
	}
	if rows[0].Thread.ID != "thr_old2" || rows[1].Thread.ID != "thr_old1" {
		t.Fatalf("mailbox order %s, %s; want the latest activity first", rows[0].Thread.ID, rows[1].Thread.ID)
	}
	if c := rows[1].Counts; c.Messages != 3 || c.Unread() != 2 {
		t.Fatalf("obj_b's counts of the first thread %+v, want 3 messages, 2 unread", c)
	}
	msgs, _, total, err := s.ThreadPage(ctx, "thr_old1", 1, 10)
	if err != nil || total != 3 || len(msgs) != 3 || msgs[0].Body != "one" || msgs[2].Body != "three" {
		t.Fatalf("thread page after the backfill: %+v, %d, %v", msgs, total, err)
	}
	if blocked, err := s.BlockedSenders(ctx, "obj_b"); err != nil || len(blocked) != 1 || blocked[0] != "obj_c" {
		t.Fatalf("blocked senders %v, %v", blocked, err)
	}

	// Done once: a later start lists nothing, and what was listed is listed once.
	old("thr_old3", "obj_d", "obj_b", now.Add(2*time.Minute), "late")
	if n, err := s.BackfillLists(ctx); err != nil || n != 0 {
		t.Fatalf("second backfill went through %d, %v; want none", n, err)
	}
	if _, _, total, _ := s.ThreadPage(ctx, "thr_old1", 1, 10); total != 3 {
		t.Fatalf("thread listed %d messages after the second start, want 3", total)
	}
	if rows, _, _ := s.Mailbox(ctx, "obj_b", "", 0, 10); len(rows) != 2 {
		t.Fatalf("the second start listed %d threads, want the 2 of the first", len(rows))
	}
}
