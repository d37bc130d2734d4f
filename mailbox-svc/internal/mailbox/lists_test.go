package mailbox_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/mailbox-svc/internal/mailbox"
	"github.com/svcdev/svc/pkg/httpx"
)

// keyOf reads a page cursor of scope the way the API does (httpx.PageKey); a cursor that does not
// verify fails the test.
func keyOf(t *testing.T, scope, cursor string) string {
	t.Helper()
	key, err := pageKey(scope, cursor)
	if err != nil {
		t.Fatalf("cursor %q of %s: %v", cursor, scope, err)
	}
	return key
}

func pageKey(scope, cursor string) (string, error) {
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	c.Request = httptest.NewRequest(http.MethodGet, "/?cursor="+url.QueryEscape(cursor), nil)
	_, key, err := httpx.PageKey(c, scope)
	return key, err
}

// mailboxIDs reads every page of viewer's mailbox with limit, and returns the thread ids in order
// and the number of pages.
func mailboxIDs(t *testing.T, f *fixture, viewer, status string, limit int) (ids []string, pages int) {
	t.Helper()
	q := mailbox.MailboxQuery{Status: status, Limit: limit}
	for pages = 1; ; pages++ {
		summaries, next, err := f.threads.Mailbox(context.Background(), viewer, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range summaries {
			ids = append(ids, s.ID)
		}
		if next == "" || pages > 100 {
			return ids, pages
		}
		scope := mailbox.MailboxScope(viewer, status)
		q.Before = keyOf(t, scope, httpx.KeyCursor(scope, next))
	}
}

func TestMailboxOrderStatusAndCounts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	first := f.send(t, "svc_alice", "svc_bob", "", "one").Message.ThreadID
	second := f.send(t, "svc_carol", "svc_bob", "", "two").Message.ThreadID
	third := f.send(t, "svc_bob", "svc_carol", "", "three").Message.ThreadID
	f.send(t, "svc_bob", "svc_alice", first, "reply")
	f.send(t, "svc_alice", "svc_bob", first, "again")

	ids, _ := mailboxIDs(t, f, bob.ObjectID, "", 10)
	if fmt.Sprint(ids) != fmt.Sprint([]string{first, third, second}) {
		t.Fatalf("bob's mailbox %v, want the latest activity first: %v", ids, []string{first, third, second})
	}
	summaries, _, err := f.threads.Mailbox(ctx, bob.ObjectID, mailbox.MailboxQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if s := summaries[0]; s.MessageCount != 3 || s.UnreadCount != 2 || s.Participants[0] != "svc_alice" {
		t.Fatalf("bob's summary of the first thread %+v, want 3 messages, 2 unread", s)
	}
	if s := summaries[1]; s.MessageCount != 1 || s.UnreadCount != 0 {
		t.Fatalf("bob's summary of his own thread %+v, want 1 message, none unread", s)
	}
	alices, _, err := f.threads.Mailbox(ctx, alice.ObjectID, mailbox.MailboxQuery{Limit: 10})
	if err != nil || len(alices) != 1 || alices[0].UnreadCount != 1 {
		t.Fatalf("alice's mailbox %+v, %v; want the first thread with bob's reply unread", alices, err)
	}

	// A read shows at once in the reader's mailbox, and only there.
	if _, err := f.threads.Read(ctx, bob.ObjectID, first, "", 50); err != nil {
		t.Fatal(err)
	}
	summaries, _, err = f.threads.Mailbox(ctx, bob.ObjectID, mailbox.MailboxQuery{Limit: 1})
	if err != nil || summaries[0].ID != first || summaries[0].UnreadCount != 0 || summaries[0].MessageCount != 3 {
		t.Fatalf("bob's mailbox after reading %+v, %v; want nothing unread", summaries, err)
	}
	if alices, _, _ = f.threads.Mailbox(ctx, alice.ObjectID, mailbox.MailboxQuery{Limit: 10}); alices[0].UnreadCount != 1 {
		t.Fatalf("bob's read changed alice's unread count: %+v", alices[0])
	}

	// The status filter keeps the order.
	if _, err := f.threads.SetStatus(ctx, bob.ObjectID, third, mailbox.StatusArchived); err != nil {
		t.Fatal(err)
	}
	if ids, _ := mailboxIDs(t, f, bob.ObjectID, mailbox.StatusOpen, 10); fmt.Sprint(ids) != fmt.Sprint([]string{first, second}) {
		t.Fatalf("open threads %v", ids)
	}
	if ids, _ := mailboxIDs(t, f, bob.ObjectID, mailbox.StatusArchived, 10); fmt.Sprint(ids) != fmt.Sprint([]string{third}) {
		t.Fatalf("archived threads %v", ids)
	}
	// A new message reopens the thread and moves it to the front.
	f.send(t, "svc_carol", "svc_bob", third, "back")
	if ids, _ := mailboxIDs(t, f, bob.ObjectID, mailbox.StatusOpen, 1); fmt.Sprint(ids) != fmt.Sprint([]string{third, first, second}) {
		t.Fatalf("open threads after a new message %v, read one a page", ids)
	}
}

// TestChattyThreadDoesNotHideOthers: hundreds of messages in one thread leave the mailbox's other
// threads on its first page, and threads that take turns are all reached through the cursors,
// every page full.
func TestChattyThreadDoesNotHideOthers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var quiet []string
	for _, from := range []string{"svc_alice", "svc_carol", "svc_alice", "svc_carol"} {
		quiet = append([]string{f.send(t, from, "svc_bob", "", "quiet").Message.ThreadID}, quiet...)
	}
	chatty := f.send(t, "svc_alice", "svc_bob", "", "chat").Message.ThreadID
	for i := range 300 {
		if i%2 == 0 {
			f.send(t, "svc_bob", "svc_alice", chatty, "chat")
		} else {
			f.send(t, "svc_alice", "svc_bob", chatty, "chat")
		}
	}
	summaries, _, err := f.threads.Mailbox(context.Background(), bob.ObjectID, mailbox.MailboxQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(summaries) != 5 || summaries[0].ID != chatty || summaries[0].MessageCount != 301 {
		t.Fatalf("bob's first page shows %d threads (first %+v), want all 5, the chatty one first with 301 messages", len(summaries), summaries[0])
	}

	// Two threads taking turns move up each time, leaving no past places: the cursors reach every
	// thread once, in full pages.
	other := f.send(t, "svc_carol", "svc_bob", "", "turns").Message.ThreadID
	for range 100 {
		f.send(t, "svc_alice", "svc_bob", chatty, "turn")
		f.send(t, "svc_carol", "svc_bob", other, "turn")
	}
	ids, pages := mailboxIDs(t, f, bob.ObjectID, "", 2)
	want := append([]string{other, chatty}, quiet...)
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Fatalf("paged mailbox %v, want %v", ids, want)
	}
	if pages != 3 {
		t.Fatalf("%d pages of 2 for 6 threads, want 3", pages)
	}
}

func TestThreadPagesAndCursors(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	thread := f.send(t, "svc_alice", "svc_bob", "", "m0").Message.ThreadID
	for i := 1; i < 7; i++ {
		f.send(t, "svc_alice", "svc_bob", thread, fmt.Sprint("m", i))
	}
	var bodies []string
	after := ""
	scope := mailbox.ThreadScope(thread)
	for page := 0; ; page++ {
		v, err := f.threads.Read(ctx, bob.ObjectID, thread, after, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range v.Messages {
			bodies = append(bodies, m.Body)
		}
		if want := 7 - len(bodies); v.UnreadCount != want || v.MessageCount != 7 {
			t.Fatalf("page %d: %d of %d unread, want %d of 7", page, v.UnreadCount, v.MessageCount, want)
		}
		if v.Next == "" {
			break
		}
		cursor := httpx.KeyCursor(scope, v.Next)
		after = keyOf(t, scope, cursor)
		if _, err := pageKey(mailbox.ThreadScope("thr_other"), cursor); err == nil {
			t.Fatal("a thread's cursor verified for another thread")
		}
	}
	if fmt.Sprint(bodies) != "[m0 m1 m2 m3 m4 m5 m6]" {
		t.Fatalf("pages showed %v, want the messages oldest first", bodies)
	}
	if _, err := pageKey(scope, "MTIuZm9yZ2Vk"); err == nil {
		t.Fatal("a forged cursor verified")
	}
	// A key of another thread, even behind a valid check, is refused by the read.
	_, err := f.threads.Read(ctx, bob.ObjectID, thread, "thr_other|0000000000000001", 3)
	wantStatus(t, err, http.StatusBadRequest)
}
