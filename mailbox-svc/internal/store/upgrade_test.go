package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

// TestUpgradeCarriesTheOldLayoutOver writes a store as the release before data-keyed lists left
// it (threads without a layout, messages by id in their own collection, some of them listed
// with a position and the latest not yet, one read receipt per message, the lists of mongox.Log),
// and checks that the upgrade lists everything: every thread in its participants' mailboxes,
// newest first, with its counts; every message in its thread in order; the read state. A second
// start changes nothing.
func TestUpgradeCarriesTheOldLayoutOver(t *testing.T) {
	t.Parallel()
	db := testkit.Database(t, testkit.Backends(t), "mailbox")
	ctx := context.Background()
	if err := mongox.EnsureIndexes(ctx, db, store.Indexes); err != nil {
		t.Fatal(err)
	}
	now := clock.Now().Add(-time.Hour)
	old := func(id, a, b string, at time.Time, bodies ...string) {
		t.Helper()
		last := at.Add(time.Duration(len(bodies)-1) * time.Second)
		_, err := db.Collection("threads").InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "participants", Value: bson.A{a, b}},
			{Key: "participant_admission", Value: "open"}, {Key: "status", Value: "open"}, {Key: "created_at", Value: at},
			{Key: "last_message_at", Value: last}, {Key: "last_message_id", Value: fmt.Sprintf("msg_%s_%d", id, len(bodies)-1)}})
		if err != nil {
			t.Fatal(err)
		}
		for i, body := range bodies {
			from, to := a, b
			if i%2 == 1 {
				from, to = b, a
			}
			doc := bson.D{{Key: "_id", Value: fmt.Sprintf("msg_%s_%d", id, i)}, {Key: "thread_id", Value: id}, {Key: "from_id", Value: from},
				{Key: "to_id", Value: to}, {Key: "kind", Value: "note"}, {Key: "body", Value: body}, {Key: "created_at", Value: at.Add(time.Duration(i) * time.Second)}}
			if i < len(bodies)-1 { // the latest not yet listed by the old projection
				doc = append(doc, bson.E{Key: "seq", Value: int64(i + 1)})
			}
			if _, err := db.Collection("messages").InsertOne(ctx, doc); err != nil {
				t.Fatal(err)
			}
		}
	}
	old("thr_old1", "obj_a", "obj_b", now, "one", "two", "three")
	old("thr_old2", "obj_c", "obj_b", now.Add(time.Minute), "hello")
	// obj_b read the first message of thr_old1; the old lists are left as they were.
	if _, err := db.Collection("reads").InsertOne(ctx, bson.D{{Key: "_id", Value: "msg_thr_old1_0"}, {Key: "thread_id", Value: "thr_old1"},
		{Key: "reader_id", Value: "obj_b"}, {Key: "read_at", Value: now.Add(time.Minute)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("lists").InsertOne(ctx, bson.D{{Key: "_id", Value: "m:thr_old1#L#1"}, {Key: "v", Value: "x"}}); err != nil {
		t.Fatal(err)
	}

	s := store.New(db)
	n, err := s.Upgrade(ctx)
	if err != nil || n != 2 {
		t.Fatalf("upgrade carried %d threads over, %v; want 2", n, err)
	}
	entries, next, err := s.Mailbox(ctx, "obj_b", "", "", 10)
	if err != nil || len(entries) != 2 || next != "" {
		t.Fatalf("obj_b's mailbox after the upgrade: %+v, %q, %v", entries, next, err)
	}
	if entries[0].ThreadID != "thr_old2" || entries[1].ThreadID != "thr_old1" {
		t.Fatalf("mailbox order %s, %s; want the latest activity first", entries[0].ThreadID, entries[1].ThreadID)
	}
	if e := entries[1]; e.Messages != 3 || e.Inbound != 2 || e.Status != "open" {
		t.Fatalf("obj_b's entry of the first thread %+v, want 3 messages, 2 inbound", e)
	}
	if open, _, err := s.Mailbox(ctx, "obj_a", "open", "", 10); err != nil || len(open) != 1 || open[0].Inbound != 1 {
		t.Fatalf("obj_a's open threads after the upgrade: %+v, %v", open, err)
	}
	msgs, more, err := s.ThreadPage(ctx, "thr_old1", "", 10)
	if err != nil || more || len(msgs) != 3 || msgs[0].Body != "one" || msgs[2].Body != "three" || msgs[2].Prev != msgs[1].ID {
		t.Fatalf("thread page after the upgrade: %+v, %v", msgs, err)
	}
	states, err := s.ReadStates(ctx, []string{store.ReadStateKey("obj_b", "thr_old1")})
	if st := states[store.ReadStateKey("obj_b", "thr_old1")]; err != nil || st.Read != 1 {
		t.Fatalf("obj_b's read state after the upgrade: %+v, %v", st, err)
	}
	if at, read := states[store.ReadStateKey("obj_b", "thr_old1")].ReadAt(1); !read || !at.Equal(now.Add(time.Minute)) {
		t.Fatalf("read time of the first message %v, %v", at, read)
	}
	if th, err := s.Thread(ctx, "thr_old1"); err != nil || th.LastSeq != 3 || th.Layout != store.Layout {
		t.Fatalf("thread after the upgrade %+v, %v", th, err)
	}
	if m, err := s.Message(ctx, "msg_thr_old1_2"); err != nil || m.Seq != 3 || m.Body != "three" {
		t.Fatalf("the old thread's last message by id: %+v, %v", m, err)
	}
	// An idempotency record of the old release names its message by the message's _id.
	if _, err := db.Collection(store.Idempotencies).InsertOne(ctx, bson.D{{Key: "_id", Value: "obj_a:k"}, {Key: "fingerprint", Value: "f"},
		{Key: "message", Value: bson.D{{Key: "_id", Value: "msg_thr_old1_0"}, {Key: "thread_id", Value: "thr_old1"}}}, {Key: "done", Value: true},
		{Key: "expires_at", Value: now.Add(2 * time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	if rec, err := s.Idempotency(ctx, "obj_a:k"); err != nil || rec.Message.ID != "msg_thr_old1_0" {
		t.Fatalf("an old idempotency record reads back %+v, %v", rec, err)
	}

	// Done once: a later start carries nothing over, and nothing is listed twice.
	if n, err := s.Upgrade(ctx); err != nil || n != 0 {
		t.Fatalf("second upgrade carried %d over, %v; want none", n, err)
	}
	if entries, _, _ := s.Mailbox(ctx, "obj_b", "", "", 10); len(entries) != 2 {
		t.Fatalf("the second start listed %d threads, want 2", len(entries))
	}
}

// TestOldThreadIsCarriedOverWhenFirstRead: a thread of the old layout that a request meets before
// the start-up upgrade reached it is carried over by that request.
func TestOldThreadIsCarriedOverWhenFirstRead(t *testing.T) {
	t.Parallel()
	db := testkit.Database(t, testkit.Backends(t), "mailbox")
	ctx := context.Background()
	now := clock.Now()
	if _, err := db.Collection("threads").InsertOne(ctx, bson.D{{Key: "_id", Value: "thr_late"}, {Key: "participants", Value: bson.A{"obj_a", "obj_b"}},
		{Key: "status", Value: "archived"}, {Key: "created_at", Value: now}, {Key: "last_message_at", Value: now}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection("messages").InsertOne(ctx, bson.D{{Key: "_id", Value: "msg_late"}, {Key: "thread_id", Value: "thr_late"},
		{Key: "from_id", Value: "obj_a"}, {Key: "to_id", Value: "obj_b"}, {Key: "kind", Value: "note"}, {Key: "body", Value: "late"}, {Key: "created_at", Value: now}}); err != nil {
		t.Fatal(err)
	}
	s := store.New(db)
	th, err := s.Thread(ctx, "thr_late")
	if err != nil || th.LastSeq != 1 || th.LastMessageID != "msg_late" {
		t.Fatalf("thread read = %+v, %v", th, err)
	}
	if archived, _, err := s.Mailbox(ctx, "obj_b", "archived", "", 10); err != nil || len(archived) != 1 || archived[0].Messages != 1 {
		t.Fatalf("obj_b's archived threads: %+v, %v", archived, err)
	}
}
