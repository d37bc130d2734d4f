package e2e

import (
	"net/url"
	"testing"
)

// TestThreadReadMarksOnlyThePage: a thread read marks read the inbound messages it returns, and
// none of the others, so a reader paging through a long thread keeps an exact unread count.
func TestThreadReadMarksOnlyThePage(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, _ := env.CreateObject(t, nil)
	bob, bobKey := env.CreateObject(t, nil)
	threadID := Str(t, sendMessage(t, env, alice, bob, "", "one"), "thread_id")
	sendMessage(t, env, bob, alice, threadID, "reply")
	for _, body := range []string{"two", "three"} {
		sendMessage(t, env, alice, bob, threadID, body)
	}

	summaryCounting(t, env, bob, bobKey, threadID, 4) // listed when each send's 201 returns

	// Page 1: "one" and bob's own reply.
	page := env.Do(t, "GET", "/api/threads/"+threadID+"?limit=2", bobKey, nil).Expect(t, 200).JSON(t)
	msgs := messagesOf(page)
	if len(msgs) != 2 || msgs[0]["read_at"] == nil || msgs[1]["read_at"] != nil {
		t.Fatalf("first page %v; want one read inbound message and bob's reply", msgs)
	}
	if page["unread_count"] != 2.0 || page["message_count"] != 4.0 {
		t.Fatalf("first page counts: %v unread of %v; want 2 of 4", page["unread_count"], page["message_count"])
	}
	if s := summaryOf(t, env, bob, bobKey, threadID); s["unread_count"] != 2.0 {
		t.Fatalf("mailbox after the first page: %v unread, want 2", s["unread_count"])
	}

	// Page 2 marks the rest.
	next := Str(t, page, "next_cursor")
	page = env.Do(t, "GET", "/api/threads/"+threadID+"?limit=2&cursor="+url.QueryEscape(next), bobKey, nil).Expect(t, 200).JSON(t)
	msgs = messagesOf(page)
	if len(msgs) != 2 || msgs[0]["read_at"] == nil || msgs[1]["read_at"] == nil || page["unread_count"] != 0.0 {
		t.Fatalf("second page %v with %v unread; want both read and 0 unread", msgs, page["unread_count"])
	}
	if s := summaryOf(t, env, bob, bobKey, threadID); s["unread_count"] != 0.0 {
		t.Fatalf("mailbox after both pages: %v unread, want 0", s["unread_count"])
	}
}
