package mailbox_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/svcdev/svc/mailbox-svc/internal/mailbox"
)

func TestThreadReadsAndStatus(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	thread := f.send(t, "svc_alice", "svc_bob", "", "one").Message.ThreadID
	for _, body := range []string{"two", "three"} {
		f.send(t, "svc_alice", "svc_bob", thread, body)
	}

	// The sender's read marks nothing: none of the messages is inbound to alice.
	v, err := f.threads.Read(ctx, alice.ObjectID, thread, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if v.MessageCount != 3 || v.UnreadCount != 0 || v.Messages[0].ReadAt != nil || v.Next != "" {
		t.Fatalf("alice's read = %+v", v)
	}
	if v.Participants[0] != "svc_alice" || v.Participants[1] != "svc_bob" || v.Messages[0].ToHash != "svc_bob" {
		t.Fatalf("hashes shown = %v, to %s", v.Participants, v.Messages[0].ToHash)
	}
	summaries, _, err := f.threads.Mailbox(ctx, bob.ObjectID, mailbox.MailboxQuery{Limit: 5})
	if err != nil || len(summaries) != 1 || summaries[0].UnreadCount != 3 {
		t.Fatalf("bob's mailbox = %+v, %v; want 3 unread", summaries, err)
	}

	// Others, existing or not, see no thread.
	_, err = f.threads.Read(ctx, carol.ObjectID, thread, "", 10)
	wantStatus(t, err, http.StatusNotFound)
	_, err = f.threads.SetStatus(ctx, carol.ObjectID, thread, mailbox.StatusArchived)
	wantStatus(t, err, http.StatusNotFound)
	_, err = f.threads.SetStatus(ctx, bob.ObjectID, thread, "closed")
	wantStatus(t, err, http.StatusBadRequest)

	s, err := f.threads.SetStatus(ctx, bob.ObjectID, thread, mailbox.StatusArchived)
	if err != nil || s.Status != mailbox.StatusArchived {
		t.Fatalf("archive: %+v, %v", s, err)
	}
	open, next, err := f.threads.Mailbox(ctx, bob.ObjectID, mailbox.MailboxQuery{Status: mailbox.StatusOpen, Limit: 5})
	if err != nil || len(open) != 0 || next != "" {
		t.Fatalf("bob's open threads after archiving: %+v, %v", open, err)
	}
	_, _, err = f.threads.Mailbox(ctx, bob.ObjectID, mailbox.MailboxQuery{Status: "closed", Limit: 5})
	wantStatus(t, err, http.StatusBadRequest)

	p, err := f.threads.Participants(ctx, thread)
	if err != nil || len(p.Participants) != 2 || p.Participants[1].Hash != "svc_bob" {
		t.Fatalf("participants = %+v, %v", p, err)
	}
	_, err = f.threads.Participants(ctx, "thr_missing")
	wantStatus(t, err, http.StatusNotFound)
}

func TestMailboxPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	for _, from := range []string{"svc_alice", "svc_carol", "svc_alice"} {
		f.send(t, from, "svc_bob", "", "hi")
	}
	seen := map[string]bool{}
	q := mailbox.MailboxQuery{Limit: 2}
	for page := 0; ; page++ {
		summaries, next, err := f.threads.Mailbox(ctx, bob.ObjectID, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range summaries {
			if seen[s.ID] {
				t.Fatalf("thread %s shown twice", s.ID)
			}
			seen[s.ID] = true
		}
		if next == "" {
			break
		}
		if page > 3 {
			t.Fatalf("cursor %q on page %d", next, page)
		}
		q.Before = next
	}
	if len(seen) != 3 {
		t.Fatalf("pages showed %d threads, want 3", len(seen))
	}
	// A key of another mailbox is refused.
	_, _, err := f.threads.Mailbox(ctx, bob.ObjectID, mailbox.MailboxQuery{Limit: 2, Before: "obj_alice|all|"})
	wantStatus(t, err, http.StatusBadRequest)
}
