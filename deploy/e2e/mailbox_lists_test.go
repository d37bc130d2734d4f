package e2e

import (
	"fmt"
	"net/url"
	"testing"
)

// TestMailboxListsThroughTheGateway: the mailbox and thread pages as lists, end to end: latest
// activity first, a chatty thread leaves the others on the first page, unread counts follow a read
// at once, cursors page through and are bound to their list (a forged or foreign one is a 400).
func TestMailboxListsThroughTheGateway(t *testing.T) {
	t.Parallel()
	env := Start(t)
	bob, bobKey := env.CreateObject(t, nil)
	carol, carolKey := env.CreateObject(t, nil)
	var quiet []string
	for i := range 3 {
		from, _ := env.CreateObject(t, nil)
		quiet = append([]string{Str(t, sendMessage(t, env, from, bob, "", fmt.Sprint("quiet ", i)), "thread_id")}, quiet...)
		summaryCounting(t, env, bob, bobKey, quiet[0], 1) // in send order
	}
	alice, _ := env.CreateObject(t, nil)
	chatty := Str(t, sendMessage(t, env, alice, bob, "", "chat 0"), "thread_id")
	for i := 1; i < 40; i++ {
		from, to := alice, bob
		if i%2 == 1 {
			from, to = bob, alice
		}
		sendMessage(t, env, from, to, chatty, fmt.Sprint("chat ", i))
	}
	summaryCounting(t, env, bob, bobKey, chatty, 40)

	ids := func(list []map[string]any) (out []string) {
		for _, th := range list {
			out = append(out, th["id"].(string))
		}
		return out
	}
	first := threadsOf(t, env, bob, bobKey, "?limit=4")
	if got, want := fmt.Sprint(ids(first)), fmt.Sprint(append([]string{chatty}, quiet...)); got != want {
		t.Fatalf("bob's first page %v, want %v: the chatty thread first, the others still there", got, want)
	}
	if first[0]["unread_count"] != 20.0 {
		t.Fatalf("chatty thread summary %v, want 20 unread", first[0])
	}

	// Pages of one: each cursor leads to the next thread, the last page has none.
	var paged []string
	cursor := ""
	for range 10 {
		m := env.Do(t, "GET", "/api/objects/"+bob+"/mailbox?limit=1"+cursor, bobKey, nil).Expect(t, 200).JSON(t)
		paged = append(paged, ids(toMaps(m["threads"]))...)
		next, _ := m["next_cursor"].(string)
		if next == "" {
			break
		}
		// Another mailbox's list does not take it.
		env.Do(t, "GET", "/api/objects/"+carol+"/mailbox?limit=1&cursor="+url.QueryEscape(next), carolKey, nil).ExpectError(t, 400, "INVALID_REQUEST")
		cursor = "&cursor=" + url.QueryEscape(next)
	}
	if fmt.Sprint(paged) != fmt.Sprint(ids(first)) {
		t.Fatalf("pages of one showed %v, want %v", paged, ids(first))
	}

	// A read shows at once in the mailbox; archiving filters it out of the open ones.
	th := env.Do(t, "GET", "/api/threads/"+chatty+"?limit=200", bobKey, nil).Expect(t, 200).JSON(t)
	if th["unread_count"] != 0.0 || len(messagesOf(th)) != 40 {
		t.Fatalf("thread read %v unread, %d messages", th["unread_count"], len(messagesOf(th)))
	}
	if s := threadsOf(t, env, bob, bobKey, "?limit=1")[0]; s["id"] != chatty || s["unread_count"] != 0.0 {
		t.Fatalf("bob's mailbox right after the read %v, want the chatty thread with nothing unread", s)
	}
	env.Do(t, "PATCH", "/api/threads/"+chatty, bobKey, map[string]any{"status": "archived"}).Expect(t, 200)
	if got := ids(threadsOf(t, env, bob, bobKey, "?status=open")); fmt.Sprint(got) != fmt.Sprint(quiet) {
		t.Fatalf("open threads %v, want %v", got, quiet)
	}
	if got := ids(threadsOf(t, env, bob, bobKey, "?status=archived")); fmt.Sprint(got) != fmt.Sprint([]string{chatty}) {
		t.Fatalf("archived threads %v", got)
	}

	// Thread pages: oldest first, a cursor bound to its thread.
	page := env.Do(t, "GET", "/api/threads/"+chatty+"?limit=15", bobKey, nil).Expect(t, 200).JSON(t)
	next := Str(t, page, "next_cursor")
	page = env.Do(t, "GET", "/api/threads/"+chatty+"?limit=15&cursor="+url.QueryEscape(next), bobKey, nil).Expect(t, 200).JSON(t)
	if msgs := messagesOf(page); len(msgs) != 15 || msgs[0]["body"] != "chat 15" {
		t.Fatalf("second page starts at %v, want chat 15", msgs[0]["body"])
	}
	env.Do(t, "GET", "/api/threads/"+quiet[0]+"?cursor="+url.QueryEscape(next), bobKey, nil).ExpectError(t, 400, "INVALID_REQUEST")
	env.Do(t, "GET", "/api/threads/"+chatty+"?cursor=MTUuZm9yZ2Vk", bobKey, nil).ExpectError(t, 400, "INVALID_REQUEST")
	env.Do(t, "GET", "/api/objects/"+bob+"/mailbox?cursor=MTUuZm9yZ2Vk", bobKey, nil).ExpectError(t, 400, "INVALID_REQUEST")
}

func toMaps(v any) []map[string]any {
	var out []map[string]any
	for _, x := range v.([]any) {
		out = append(out, x.(map[string]any))
	}
	return out
}
