package mailbox_test

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/svcdev/svc/mailbox-svc/internal/mailbox"
	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
)

// wantStatus fails unless err is an *httpx.Error with the status.
func wantStatus(t *testing.T, err error, status int) {
	t.Helper()
	if err == nil || httpx.AsError(err).Status != status {
		t.Fatalf("got %v, want a %d", err, status)
	}
}

func TestSendOpensThenContinuesAThread(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()

	first, err := f.sender.Send(ctx, "req_1", note("svc_alice", "svc_bob", "hello"), "")
	if err != nil {
		t.Fatal(err)
	}
	if first.FromHash != "svc_alice" || first.ToHash != "svc_bob" || first.Replayed {
		t.Fatalf("answer = %+v", first)
	}
	if got := f.outbox.types(); !slices.Equal(got, []string{events.ThreadCreated, events.MessageCreated}) {
		t.Fatalf("events of an opening send = %v", got)
	}
	d := note("svc_bob", "svc_alice", "hi back")
	d.ThreadID = first.Message.ThreadID
	reply, err := f.sender.Send(ctx, "req_2", d, "")
	if err != nil {
		t.Fatal(err)
	}
	if reply.Message.ThreadID != first.Message.ThreadID {
		t.Fatalf("the reply opened thread %s instead of continuing %s", reply.Message.ThreadID, first.Message.ThreadID)
	}
	if got := f.outbox.types(); len(got) != 3 || got[2] != events.MessageCreated {
		t.Fatalf("events after the reply = %v, want one more message.created", got)
	}
	if n := f.count(t, store.Threads); n != 1 {
		t.Fatalf("%d threads, want 1", n)
	}
	// message.created names the message each one follows: none for the thread's first.
	var prevs []string
	for _, ev := range f.outbox.payloads(t, events.MessageCreated) {
		var d contract.MessageCreatedData
		if err := ev.Decode(&d); err != nil {
			t.Fatal(err)
		}
		prevs = append(prevs, d.PrevMessageID)
	}
	if !slices.Equal(prevs, []string{"", first.Message.ID}) {
		t.Fatalf("prev_message_id of the two sends = %q, want none, then the first message", prevs)
	}
	// Both are listed at once: the thread in both mailboxes, the reply in the thread.
	for _, o := range []string{alice.ObjectID, bob.ObjectID} {
		boxes, _, err := f.threads.Mailbox(ctx, o, mailbox.MailboxQuery{Limit: 5})
		if err != nil || len(boxes) != 1 || boxes[0].MessageCount != 2 {
			t.Fatalf("mailbox of %s right after the reply: %+v, %v", o, boxes, err)
		}
	}

	// The thread between alice and bob is not carol's to continue, and an unknown one is not found.
	d = note("svc_carol", "svc_bob", "let me in")
	d.ThreadID = first.Message.ThreadID
	_, err = f.sender.Send(ctx, "req_3", d, "")
	wantStatus(t, err, http.StatusNotFound)
	d.ThreadID = "thr_missing"
	_, err = f.sender.Send(ctx, "req_4", d, "")
	wantStatus(t, err, http.StatusNotFound)
	_, err = f.sender.Send(ctx, "req_5", note("svc_alice", "svc_nobody", "x"), "")
	wantStatus(t, err, http.StatusNotFound)
	_, err = f.sender.Send(ctx, "req_6", note("svc_bob", "svc_bobold", "x"), "")
	wantStatus(t, err, http.StatusBadRequest)
	if n := f.count(t, store.Messages); n != 2 {
		t.Fatalf("%d messages after refused sends, want 2", n)
	}
}

func TestSendToABlockingRecipientWritesNothing(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.blocks.Block(ctx, "req_1", mailbox.Owner{ObjectID: bob.ObjectID, Hash: bob.Hash}, "svc_alice"); err != nil {
		t.Fatal(err)
	}
	_, err := f.sender.Send(ctx, "req_2", note("svc_alice", "svc_bob", "hello"), "key-1")
	wantStatus(t, err, http.StatusForbidden)
	for _, coll := range []string{store.Threads, store.Messages, store.Idempotencies} {
		if n := f.count(t, coll); n != 0 {
			t.Fatalf("a refused send left %d documents in %s", n, coll)
		}
	}
}

func TestSendWithAnIdempotencyKey(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	first, err := f.sender.Send(ctx, "req_1", note("svc_alice", "svc_bob", "once"), "key-1")
	if err != nil {
		t.Fatal(err)
	}
	// A retry through bob's previous hash is the same request.
	again, err := f.sender.Send(ctx, "req_2", note("svc_alice", "svc_bobold", "once"), "key-1")
	if err != nil {
		t.Fatal(err)
	}
	if !again.Replayed || again.Message.ID != first.Message.ID || again.Message.ThreadID != first.Message.ThreadID {
		t.Fatalf("retry = %+v, want a replay of %s", again, first.Message.ID)
	}
	_, err = f.sender.Send(ctx, "req_3", note("svc_alice", "svc_bob", "something else"), "key-1")
	wantStatus(t, err, http.StatusConflict)
	// The key is the sender's own: carol may use the same one.
	other, err := f.sender.Send(ctx, "req_4", note("svc_carol", "svc_bob", "once"), "key-1")
	if err != nil || other.Replayed {
		t.Fatalf("another sender's key: %+v, %v", other, err)
	}
	if n := f.count(t, store.Messages); n != 2 {
		t.Fatalf("%d messages, want 2", n)
	}
	if got := len(f.outbox.types()); got != 4 {
		t.Fatalf("%d events handed to the relay, want 4 (two opening sends)", got)
	}
}

// TestConcurrentIdempotentSends fires one key many times at once: one send is written and every
// request answers it.
func TestConcurrentIdempotentSends(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const n = 20
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, err := f.sender.Send(context.Background(), "req", note("svc_alice", "svc_bob", "race"), "same-key")
			errs[i] = err
			if err == nil {
				ids[i] = s.Message.ID
			}
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("send %d: %v", i, errs[i])
		}
		if ids[i] != ids[0] {
			t.Fatalf("send %d answered message %s, send 0 answered %s", i, ids[i], ids[0])
		}
	}
	if m, th := f.count(t, store.Messages), f.count(t, store.Threads); m != 1 || th != 1 {
		t.Fatalf("%d messages and %d threads, want 1 of each", m, th)
	}
	if got := f.outbox.types(); !slices.Equal(got, []string{events.ThreadCreated, events.MessageCreated}) {
		t.Fatalf("events handed to the relay = %v, want one thread.created and one message.created", got)
	}
}

// TestSendResumesAnUnfinishedRecord finishes a send whose record was written by a request that
// stopped before writing the message: the retry writes it, once, with its events.
func TestSendResumesAnUnfinishedRecord(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	d := note("svc_alice", "svc_bob", "interrupted")
	now := clock.Now()
	rec := &store.Idempotency{
		ID: store.IdempotencyID(alice.ObjectID, "key-1"), Fingerprint: mailbox.Fingerprint(alice.ObjectID, bob.ObjectID, d),
		Thread:    &store.Thread{ID: "thr_1", Participants: []string{alice.ObjectID, bob.ObjectID}, Admission: "open", Status: "open", CreatedAt: now, LastMessageAt: now},
		Message:   store.Message{ID: "msg_1", ThreadID: "thr_1", FromID: alice.ObjectID, ToID: bob.ObjectID, Kind: d.Kind, Body: d.Body, CreatedAt: now},
		CreatedAt: now, ExpiresAt: now.Add(time.Hour),
	}
	if _, err := f.store.BeginIdempotent(ctx, rec); err != nil {
		t.Fatal(err)
	}
	s, err := f.sender.Send(ctx, "req_2", d, "key-1")
	if err != nil {
		t.Fatal(err)
	}
	if !s.Replayed || s.Message.ID != "msg_1" {
		t.Fatalf("answer = %+v, want the recorded message replayed", s)
	}
	if m, th := f.count(t, store.Messages), f.count(t, store.Threads); m != 1 || th != 1 {
		t.Fatalf("%d messages and %d threads, want 1 of each", m, th)
	}
	done, err := f.store.Idempotency(ctx, rec.ID)
	if err != nil || !done.Done {
		t.Fatalf("record after the retry: %+v, %v; want done", done, err)
	}
}

// TestConcurrentSendsToOneThread: every concurrent reply is stored and counted.
func TestConcurrentSendsToOneThread(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	first := f.send(t, "svc_alice", "svc_bob", "", "start")
	const n = 20
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			d := note("svc_bob", "svc_alice", "reply")
			d.ThreadID = first.Message.ThreadID
			_, err := f.sender.Send(ctx, "req", d, "")
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	v, err := f.threads.Read(ctx, bob.ObjectID, first.Message.ThreadID, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	if v.MessageCount != n+1 || len(v.Messages) != n+1 || v.UnreadCount != 0 {
		t.Fatalf("thread as bob reads it: %d messages counted, %d shown, %d unread; want %d, %d, 0",
			v.MessageCount, len(v.Messages), v.UnreadCount, n+1, n+1)
	}
	summaries, _, err := f.threads.Mailbox(ctx, alice.ObjectID, mailbox.MailboxQuery{Limit: 10})
	if err != nil || len(summaries) != 1 || summaries[0].UnreadCount != n || summaries[0].MessageCount != n+1 {
		t.Fatalf("alice's mailbox = %+v, %v; want one thread with %d messages, %d unread", summaries, err, n+1, n)
	}
	// Each message.created names the message before it in the thread, whatever the races.
	prev := map[string]string{}
	for _, ev := range f.outbox.payloads(t, events.MessageCreated) {
		var d contract.MessageCreatedData
		if err := ev.Decode(&d); err != nil {
			t.Fatal(err)
		}
		prev[d.MessageID] = d.PrevMessageID
	}
	for i, m := range v.Messages {
		want := ""
		if i > 0 {
			want = v.Messages[i-1].ID
		}
		if prev[m.ID] != want {
			t.Fatalf("message %d (%s) follows %q by its event, %q in the thread", i, m.ID, prev[m.ID], want)
		}
	}
}

// TestSendNamesPrivateObjectsAsTheSenderDid: the answer never turns an old hash of a private
// object into its current one; a public object is shown by its current hash.
func TestSendNamesPrivateObjectsAsTheSenderDid(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	for _, c := range []struct{ from, to, wantFrom, wantTo, key string }{
		{"svc_alice", "svc_danaold", "svc_alice", "svc_danaold", ""},
		{"svc_danaold", "svc_bobold", "svc_danaold", "svc_bob", ""},
		{"svc_alice", "svc_danaold", "svc_alice", "svc_danaold", "k"},
		{"svc_alice", "svc_danaold", "svc_alice", "svc_danaold", "k"}, // the replay
		{"svc_alice", "svc_dana", "svc_alice", "svc_dana", "k"},       // the same send, through the current hash
	} {
		s, err := f.sender.Send(ctx, "req", note(c.from, c.to, "hi"), c.key)
		if err != nil {
			t.Fatal(err)
		}
		if s.FromHash != c.wantFrom || s.ToHash != c.wantTo {
			t.Errorf("send %s → %s answered %s → %s; want %s → %s", c.from, c.to, s.FromHash, s.ToHash, c.wantFrom, c.wantTo)
		}
	}
	owner := mailbox.Owner{ObjectID: alice.ObjectID, Hash: alice.Hash}
	if got, err := f.blocks.Block(ctx, "req", owner, "svc_danaold"); err != nil || got != "svc_danaold" {
		t.Errorf("blocking a private object by an old hash answered %q, %v", got, err)
	}
	if got, err := f.blocks.Unblock(ctx, "req", owner, "svc_danaold"); err != nil || got != "svc_danaold" {
		t.Errorf("unblocking a private object by an old hash answered %q, %v", got, err)
	}
}
