package e2e

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// sendMessage posts a note from one object to another (threadID "" opens a thread) and returns
// the 201 answer.
func sendMessage(t testing.TB, env *Env, from, to, threadID, body string) map[string]any {
	t.Helper()
	req := map[string]any{"from_hash": from, "to_hash": to, "kind": "note", "body": body}
	if threadID != "" {
		req["thread_id"] = threadID
	}
	return env.Do(t, "POST", "/api/messages", "", req).Expect(t, http.StatusCreated).JSON(t)
}

// threadsOf returns the thread summaries of an object's mailbox (one page).
func threadsOf(t testing.TB, env *Env, hash, key, query string) []map[string]any {
	t.Helper()
	m := env.Do(t, "GET", "/api/objects/"+hash+"/mailbox"+query, key, nil).Expect(t, 200).JSON(t)
	var out []map[string]any
	for _, th := range m["threads"].([]any) {
		out = append(out, th.(map[string]any))
	}
	return out
}

// summaryOf returns the summary of one thread in an object's mailbox, read once: a send is
// listed there when its 201 returns.
func summaryOf(t testing.TB, env *Env, hash, key, threadID string) map[string]any {
	t.Helper()
	for _, th := range threadsOf(t, env, hash, key, "?limit=200") {
		if th["id"] == threadID {
			return th
		}
	}
	t.Fatalf("thread %s is not in the mailbox of %s", threadID, hash)
	return nil
}

// summaryCounting returns the summary of one thread in an object's mailbox, read once, and fails
// the test unless it counts n messages.
func summaryCounting(t testing.TB, env *Env, hash, key, threadID string, n int) map[string]any {
	t.Helper()
	s := summaryOf(t, env, hash, key, threadID)
	if s["message_count"] != float64(n) {
		t.Fatalf("thread %s in the mailbox of %s counts %v messages, want %d", threadID, hash, s["message_count"], n)
	}
	return s
}

// threadsCounting returns one page of an object's mailbox, read once, and fails the test unless
// it lists n threads.
func threadsCounting(t testing.TB, env *Env, hash, key, query string, n int) []map[string]any {
	t.Helper()
	list := threadsOf(t, env, hash, key, query)
	if len(list) != n {
		t.Fatalf("the mailbox of %s%s lists %d threads, want %d", hash, query, len(list), n)
	}
	return list
}

func messagesOf(thread map[string]any) []map[string]any {
	var out []map[string]any
	for _, m := range thread["messages"].([]any) {
		out = append(out, m.(map[string]any))
	}
	return out
}

func TestMessagesAndThreads(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, aliceKey := env.CreateObject(t, nil)
	bob, bobKey := env.CreateObject(t, nil)

	first := sendMessage(t, env, alice, bob, "", "Hello Bob")
	threadID := Str(t, first, "thread_id")
	if !strings.HasPrefix(threadID, "thr_") || !strings.HasPrefix(Str(t, first, "id"), "msg_") {
		t.Fatalf("send answered %v", first)
	}
	if first["from_hash"] != alice || first["to_hash"] != bob || first["kind"] != "note" || first["body"] != "Hello Bob" {
		t.Fatalf("send answered %v", first)
	}
	reply := sendMessage(t, env, bob, alice, threadID, "Hi Alice")
	if reply["thread_id"] != threadID {
		t.Fatalf("a reply with thread_id went to thread %v, want %s", reply["thread_id"], threadID)
	}
	sendMessage(t, env, alice, bob, threadID, "How are you?")

	// Each side sees the thread with its own unread count.
	b := summaryCounting(t, env, bob, bobKey, threadID, 3)
	if b["message_count"] != 3.0 || b["unread_count"] != 2.0 || b["status"] != "open" {
		t.Fatalf("bob's summary %v, want 3 messages, 2 unread, open", b)
	}
	if p := b["participants"].([]any); len(p) != 2 || p[0] != alice || p[1] != bob {
		t.Fatalf("participants %v, want [%s %s]", p, alice, bob)
	}
	if a := summaryCounting(t, env, alice, aliceKey, threadID, 3); a["unread_count"] != 1.0 {
		t.Fatalf("alice's summary %v, want 1 unread", a)
	}

	// Reading marks the reader's inbound messages read, and only those.
	th := env.Do(t, "GET", "/api/threads/"+threadID, bobKey, nil).Expect(t, 200).JSON(t)
	if th["thread_id"] != threadID || th["id"] != threadID || th["unread_count"] != 0.0 || th["message_count"] != 3.0 ||
		th["participant_admission"] != "open" || th["next_cursor"] != nil {
		t.Fatalf("thread read %v", th)
	}
	msgs := messagesOf(th)
	if len(msgs) != 3 || msgs[0]["body"] != "Hello Bob" || msgs[1]["body"] != "Hi Alice" || msgs[2]["body"] != "How are you?" {
		t.Fatalf("messages %v, want the three, oldest first", msgs)
	}
	if msgs[0]["read_at"] == nil || msgs[2]["read_at"] == nil || msgs[1]["read_at"] != nil {
		t.Fatalf("after bob's read, read_at = %v, %v, %v; want bob's two inbound read, his own reply not", msgs[0]["read_at"], msgs[1]["read_at"], msgs[2]["read_at"])
	}
	if msgs[1]["from_hash"] != bob || msgs[1]["to_hash"] != alice {
		t.Fatalf("reply rendered %v", msgs[1])
	}
	readAt := msgs[0]["read_at"]
	if b := summaryOf(t, env, bob, bobKey, threadID); b["unread_count"] != 0.0 {
		t.Fatalf("bob's unread after reading: %v", b["unread_count"])
	}
	if a := summaryOf(t, env, alice, aliceKey, threadID); a["unread_count"] != 1.0 {
		t.Fatalf("bob's read changed alice's unread: %v", a["unread_count"])
	}
	// A second read keeps the first read time; alice's read marks the reply.
	again := messagesOf(env.Do(t, "GET", "/api/threads/"+threadID, bobKey, nil).Expect(t, 200).JSON(t))
	if again[0]["read_at"] != readAt {
		t.Fatalf("read_at moved from %v to %v on a second read", readAt, again[0]["read_at"])
	}
	fromAlice := messagesOf(env.Do(t, "GET", "/api/threads/"+threadID, aliceKey, nil).Expect(t, 200).JSON(t))
	if fromAlice[1]["read_at"] == nil {
		t.Fatal("alice's read did not mark bob's reply read")
	}

	// thread_id null opens another thread between the same two.
	other := sendMessage(t, env, alice, bob, "", "Another topic")
	if other["thread_id"] == threadID {
		t.Fatal("a send without thread_id continued the existing thread")
	}
	threadsCounting(t, env, bob, bobKey, "", 2)
}

// TestParticipantAdmission checks that a thread reports the recipient's admission rule when it
// opened, and the default without one: rules given at creation bind the very first send.
func TestParticipantAdmission(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, aliceKey := env.CreateObject(t, nil)
	bob, bobKey := env.CreateObject(t, map[string]any{"rules": map[string]any{"participant_admission": map[string]any{"mode": "owner_approval"}}})
	toBob := Str(t, sendMessage(t, env, alice, bob, "", "may I?"), "thread_id")
	toAlice := Str(t, sendMessage(t, env, bob, alice, "", "hello"), "thread_id")
	for _, c := range []struct{ thread, key, want string }{{toBob, bobKey, "owner_approval"}, {toAlice, aliceKey, "open"}} {
		if got := env.Do(t, "GET", "/api/threads/"+c.thread, c.key, nil).Expect(t, 200).JSON(t)["participant_admission"]; got != c.want {
			t.Errorf("participant_admission = %v, want %s", got, c.want)
		}
	}
}

func TestSendValidation(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, _ := env.CreateObject(t, nil)
	bob, _ := env.CreateObject(t, nil)
	carol, _ := env.CreateObject(t, nil)
	aliceCarol := Str(t, sendMessage(t, env, alice, carol, "", "hi"), "thread_id")
	ok := func(change map[string]any) map[string]any {
		m := map[string]any{"from_hash": alice, "to_hash": bob, "kind": "question", "body": "hi?"}
		for k, v := range change {
			if v == nil {
				delete(m, k)
			} else {
				m[k] = v
			}
		}
		return m
	}
	cases := []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"missing from_hash", ok(map[string]any{"from_hash": nil}), 400, "MISSING_FIELD"},
		{"missing to_hash", ok(map[string]any{"to_hash": nil}), 400, "MISSING_FIELD"},
		{"missing kind", ok(map[string]any{"kind": nil}), 400, "MISSING_FIELD"},
		{"missing body", ok(map[string]any{"body": nil}), 400, "MISSING_FIELD"},
		{"unknown kind", ok(map[string]any{"kind": "shout"}), 400, "INVALID_KIND"},
		{"empty body", ok(map[string]any{"body": "  "}), 400, "INVALID_REQUEST"},
		{"malformed to_hash", ok(map[string]any{"to_hash": "bob"}), 400, "INVALID_REQUEST"},
		{"wrong type", ok(map[string]any{"body": 5}), 400, "INVALID_REQUEST"},
		{"unknown field", ok(map[string]any{"subject": "x"}), 400, "UNKNOWN_FIELD"},
		{"unknown recipient", ok(map[string]any{"to_hash": "svc_nosuchobject"}), 404, "NOT_FOUND"},
		{"unknown sender", ok(map[string]any{"from_hash": "svc_nosuchobject"}), 404, "NOT_FOUND"},
		{"to oneself", ok(map[string]any{"to_hash": alice}), 400, "INVALID_REQUEST"},
		{"unknown thread", ok(map[string]any{"thread_id": "thr_01aaaaaaaaaaaaaaaaaaaaaaaa"}), 404, "NOT_FOUND"},
		{"thread of other objects", ok(map[string]any{"thread_id": aliceCarol}), 404, "NOT_FOUND"},
		{"body over 64 KiB", ok(map[string]any{"body": strings.Repeat("é", 32<<10) + "x"}), 413, "PAYLOAD_TOO_LARGE"},
		{"request over 1 MiB", ok(map[string]any{"body": strings.Repeat("x", 1<<20)}), 413, "PAYLOAD_TOO_LARGE"},
		{"not JSON", `{"from_hash":`, 400, "INVALID_JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env.Do(t, "POST", "/api/messages", "", c.body).ExpectError(t, c.status, c.code)
		})
	}
	// Every kind is accepted, and a body of exactly 64 KiB.
	for _, kind := range []string{"note", "question", "request", "artifact_update", "system"} {
		env.Do(t, "POST", "/api/messages", "", ok(map[string]any{"kind": kind})).Expect(t, 201)
	}
	env.Do(t, "POST", "/api/messages", "", ok(map[string]any{"body": strings.Repeat("é", 32<<10)})).Expect(t, 201)
	env.Send(t, Request{Method: "POST", Path: "/api/messages", Body: ok(nil),
		Headers: map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}}).ExpectError(t, 400, "INVALID_REQUEST")
}

func TestThreadAccess(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, aliceKey := env.CreateObject(t, nil)
	bob, bobKey := env.CreateObject(t, nil)
	_, malloryKey := env.CreateObject(t, nil)
	threadID := Str(t, sendMessage(t, env, alice, bob, "", "private words"), "thread_id")
	path := "/api/threads/" + threadID

	env.Do(t, "GET", path, "", nil).ExpectError(t, 401, "UNAUTHORIZED")
	// A third object's valid key learns nothing, not even that the thread exists.
	unknown := env.Do(t, "GET", "/api/threads/thr_01aaaaaaaaaaaaaaaaaaaaaaaa", malloryKey, nil)
	unknown.ExpectError(t, 404, "NOT_FOUND")
	foreign := env.Do(t, "GET", path, malloryKey, nil)
	foreign.ExpectError(t, 404, "NOT_FOUND")
	if strings.Contains(string(foreign.Body), "private words") {
		t.Fatal("the 404 leaks the thread")
	}
	env.Do(t, "PATCH", path, malloryKey, map[string]any{"status": "archived"}).ExpectError(t, 404, "NOT_FOUND")
	if summaryCounting(t, env, bob, bobKey, threadID, 1)["unread_count"] != 1.0 {
		t.Fatal("a foreign read marked the message read")
	}
	// Another object's mailbox is forbidden.
	env.Do(t, "GET", "/api/objects/"+bob+"/mailbox", aliceKey, nil).ExpectError(t, 403, "FORBIDDEN")
	env.Do(t, "GET", "/api/objects/"+bob+"/mailbox", "", nil).ExpectError(t, 401, "UNAUTHORIZED")

	// Sub-keys need the mailbox scope for the mailbox and threads.
	subKey := func(scopes ...string) string {
		return Str(t, env.Do(t, "POST", "/api/objects/"+bob+"/keys", bobKey, map[string]any{"scopes": scopes}).Expect(t, 201).JSON(t), "key")
	}
	reader, mailReader := subKey("read"), subKey("read", "mailbox")
	env.Do(t, "GET", "/api/objects/"+bob+"/mailbox", reader, nil).ExpectError(t, 403, "INSUFFICIENT_SCOPE")
	env.Do(t, "GET", path, reader, nil).ExpectError(t, 403, "INSUFFICIENT_SCOPE")
	env.Do(t, "PATCH", path, mailReader, map[string]any{"status": "archived"}).ExpectError(t, 403, "INSUFFICIENT_SCOPE")
	if n := len(threadsOf(t, env, bob, mailReader, "")); n != 1 {
		t.Fatalf("the mailbox sub-key sees %d threads, want 1", n)
	}
	if th := env.Do(t, "GET", path, mailReader, nil).Expect(t, 200).JSON(t); th["unread_count"] != 0.0 {
		t.Fatalf("a read with a mailbox sub-key left %v unread", th["unread_count"])
	}
}

func TestArchiveAndReopen(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, _ := env.CreateObject(t, nil)
	bob, bobKey := env.CreateObject(t, nil)
	threadID := Str(t, sendMessage(t, env, alice, bob, "", "one"), "thread_id")
	path := "/api/threads/" + threadID

	env.Do(t, "PATCH", path, bobKey, map[string]any{}).ExpectError(t, 400, "MISSING_FIELD")
	env.Do(t, "PATCH", path, bobKey, map[string]any{"status": "deleted"}).ExpectError(t, 400, "INVALID_REQUEST")
	s := env.Do(t, "PATCH", path, bobKey, map[string]any{"status": "archived"}).Expect(t, 200).JSON(t)
	if s["id"] != threadID || s["status"] != "archived" || s["message_count"] != 1.0 || s["unread_count"] != 1.0 {
		t.Fatalf("archive answered %v", s)
	}
	if open := threadsOf(t, env, bob, bobKey, "?status=open"); len(open) != 0 {
		t.Fatalf("status=open lists %v", open)
	}
	threadsCounting(t, env, bob, bobKey, "?status=archived", 1)
	env.Do(t, "GET", "/api/objects/"+bob+"/mailbox?status=gone", bobKey, nil).ExpectError(t, 400, "INVALID_REQUEST")
	// A new message reopens the thread.
	sendMessage(t, env, alice, bob, threadID, "two")
	if s := summaryCounting(t, env, bob, bobKey, threadID, 2); s["status"] != "open" || s["message_count"] != 2.0 {
		t.Fatalf("after a new message: %v, want open with 2 messages", s)
	}
	env.Do(t, "PATCH", path, bobKey, map[string]any{"status": "archived"}).Expect(t, 200)
	if s := env.Do(t, "PATCH", path, bobKey, map[string]any{"status": "open"}).Expect(t, 200).JSON(t); s["status"] != "open" {
		t.Fatalf("reopen answered %v", s)
	}
}

func TestMailboxAndThreadPaging(t *testing.T) {
	t.Parallel()
	env := Start(t)
	bob, bobKey := env.CreateObject(t, nil)
	var threads []string
	for i := range 3 {
		from, _ := env.CreateObject(t, nil)
		threads = append(threads, Str(t, sendMessage(t, env, from, bob, "", fmt.Sprint("thread ", i)), "thread_id"))
		time.Sleep(2 * time.Millisecond) // distinct last message times
	}
	page := func(query string) ([]string, string) {
		m := env.Do(t, "GET", "/api/objects/"+bob+"/mailbox"+query, bobKey, nil).Expect(t, 200).JSON(t)
		var ids []string
		for _, th := range m["threads"].([]any) {
			ids = append(ids, th.(map[string]any)["id"].(string))
		}
		next, _ := m["next_cursor"].(string)
		return ids, next
	}
	threadsCounting(t, env, bob, bobKey, "", 3)
	ids, next := page("?limit=2")
	if len(ids) != 2 || ids[0] != threads[2] || ids[1] != threads[1] || next == "" {
		t.Fatalf("first page %v (next %q), want the two latest threads", ids, next)
	}
	ids, next = page("?limit=2&cursor=" + next)
	if len(ids) != 1 || ids[0] != threads[0] || next != "" {
		t.Fatalf("second page %v (next %q), want the oldest thread and no cursor", ids, next)
	}
	// A new message moves its thread to the front.
	var oldest map[string]any
	for _, m := range messagesOf(env.Do(t, "GET", "/api/threads/"+threads[0], bobKey, nil).Expect(t, 200).JSON(t)) {
		oldest = m
	}
	sendMessage(t, env, oldest["from_hash"].(string), bob, threads[0], "bump")
	if ids, _ = page(""); ids[0] != threads[0] {
		t.Fatalf("mailbox after the bump %v, want %s first", ids, threads[0])
	}
	env.Do(t, "GET", "/api/objects/"+bob+"/mailbox?limit=0", bobKey, nil).ExpectError(t, 400, "INVALID_REQUEST")
	env.Do(t, "GET", "/api/objects/"+bob+"/mailbox?limit=201", bobKey, nil).ExpectError(t, 400, "INVALID_REQUEST")
	env.Do(t, "GET", "/api/objects/"+bob+"/mailbox?cursor=bm9wZQ", bobKey, nil).ExpectError(t, 400, "INVALID_REQUEST")

	// A thread's messages page oldest first; each page marks its own inbound messages read.
	alice, _ := env.CreateObject(t, nil)
	threadID := Str(t, sendMessage(t, env, alice, bob, "", "m0"), "thread_id")
	for i := 1; i < 5; i++ {
		sendMessage(t, env, alice, bob, threadID, fmt.Sprint("m", i))
	}
	var bodies []string
	cursor := ""
	for range 4 {
		path := "/api/threads/" + threadID + "?limit=2"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		th := env.Do(t, "GET", path, bobKey, nil).Expect(t, 200).JSON(t)
		if want := float64(max(5-len(bodies)-2, 0)); th["unread_count"] != want || th["message_count"] != 5.0 {
			t.Fatalf("thread page counts %v / %v, want %v unread of 5", th["unread_count"], th["message_count"], want)
		}
		for _, m := range messagesOf(th) {
			bodies = append(bodies, m["body"].(string))
			if m["read_at"] == nil {
				t.Fatalf("message %v is not marked read", m)
			}
		}
		if cursor, _ = th["next_cursor"].(string); cursor == "" {
			break
		}
	}
	if strings.Join(bodies, ",") != "m0,m1,m2,m3,m4" {
		t.Fatalf("paged messages %v, want m0..m4 oldest first", bodies)
	}
	env.Do(t, "GET", "/api/threads/"+threadID+"?cursor=bm9wZQ", bobKey, nil).ExpectError(t, 400, "INVALID_REQUEST")
}

func TestSenderBlocks(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, _ := env.CreateObject(t, nil)
	bob, bobKey := env.CreateObject(t, nil)
	carol, _ := env.CreateObject(t, nil)
	blocks := "/api/objects/" + bob + "/sender-blocks"
	threadID := Str(t, sendMessage(t, env, alice, bob, "", "before the block"), "thread_id")

	env.Do(t, "POST", blocks, bobKey, map[string]any{}).ExpectError(t, 400, "MISSING_FIELD")
	env.Do(t, "POST", blocks, bobKey, map[string]any{"blocked_hash": "nope"}).ExpectError(t, 400, "INVALID_REQUEST")
	env.Do(t, "POST", blocks, bobKey, map[string]any{"blocked_hash": "svc_nosuchobject"}).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "POST", blocks, bobKey, map[string]any{"blocked_hash": bob}).ExpectError(t, 400, "INVALID_REQUEST")
	env.Do(t, "POST", blocks, "", map[string]any{"blocked_hash": carol}).ExpectError(t, 401, "UNAUTHORIZED")
	for range 2 { // blocking again answers the same
		r := env.Do(t, "POST", blocks, bobKey, map[string]any{"blocked_hash": carol}).Expect(t, 201).JSON(t)
		if r["ok"] != true || r["blocked_hash"] != carol {
			t.Fatalf("block answered %v", r)
		}
	}
	env.Do(t, "POST", blocks, bobKey, map[string]any{"blocked_hash": alice}).Expect(t, 201)

	// A blocked sender gets 403 and writes nothing: no new thread, no message in an old one.
	msg := map[string]any{"from_hash": carol, "to_hash": bob, "kind": "note", "body": "let me in"}
	env.Do(t, "POST", "/api/messages", "", msg).ExpectError(t, 403, "SENDER_BLOCKED")
	msg["from_hash"], msg["thread_id"] = alice, threadID
	env.Do(t, "POST", "/api/messages", "", msg).ExpectError(t, 403, "SENDER_BLOCKED")
	list := threadsCounting(t, env, bob, bobKey, "", 1)
	if len(list) != 1 || list[0]["message_count"] != 1.0 {
		t.Fatalf("after blocked sends bob's mailbox is %v, want the one old thread with one message", list)
	}
	// The block binds the recipient only: bob may still write to carol.
	sendMessage(t, env, bob, carol, "", "I can still write to you")

	// The owner's blocked list, beside the rules (context-svc's projection of mailbox-svc's block
	// events, which follows within moments), oldest first.
	blocked := func() string {
		return fmt.Sprint(env.Do(t, "GET", "/api/objects/"+bob+"/rules?show_blocked_list=1", bobKey, nil).Expect(t, 200).JSON(t)["blocked_hashes"])
	}
	env.Eventually(t, func() bool { return blocked() == fmt.Sprint([]any{carol, alice}) }, "blocked list [carol alice]")

	r := env.Do(t, "DELETE", blocks+"/"+alice, bobKey, nil).Expect(t, 200).JSON(t)
	if r["ok"] != true || r["unblocked"] != alice {
		t.Fatalf("unblock answered %v", r)
	}
	env.Do(t, "DELETE", blocks+"/"+alice, bobKey, nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "DELETE", blocks+"/svc_nosuchobject", bobKey, nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "POST", "/api/messages", "", msg).Expect(t, 201)
	env.Eventually(t, func() bool { return blocked() == fmt.Sprint([]any{carol}) }, "blocked list [carol] after unblocking alice")
}

func TestIdempotentSend(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, _ := env.CreateObject(t, nil)
	bob, bobKey := env.CreateObject(t, nil)
	send := func(key, body string) *Response {
		return env.Send(t, Request{Method: "POST", Path: "/api/messages", Headers: map[string]string{"Idempotency-Key": key},
			Body: map[string]any{"from_hash": alice, "to_hash": bob, "kind": "request", "body": body}})
	}
	first := send("order-1", "ship it").Expect(t, 201)
	retry := send("order-1", "ship it").Expect(t, 201)
	if string(retry.Body) != string(first.Body) {
		t.Fatalf("retry answered %s, want the first answer %s", retry.Body, first.Body)
	}
	if first.Header.Get("Idempotent-Replayed") != "" || retry.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("Idempotent-Replayed: first %q, retry %q", first.Header.Get("Idempotent-Replayed"), retry.Header.Get("Idempotent-Replayed"))
	}
	send("order-1", "something else").ExpectError(t, 409, "CONFLICT")
	threadID := Str(t, first.JSON(t), "thread_id")

	// Concurrent duplicates, into the same thread, are stored once.
	var wg sync.WaitGroup
	ids := make([]string, 10)
	for i := range ids {
		wg.Go(func() {
			ids[i] = Str(t, env.Send(t, Request{Method: "POST", Path: "/api/messages", Headers: map[string]string{"Idempotency-Key": "order-2"},
				Body: map[string]any{"from_hash": alice, "to_hash": bob, "kind": "request", "body": "again", "thread_id": threadID}}).
				Expect(t, 201).JSON(t), "id")
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("concurrent duplicates answered different messages: %v", ids)
		}
	}
	list := threadsCounting(t, env, bob, bobKey, "", 1)
	list[0] = summaryCounting(t, env, bob, bobKey, threadID, 2)
	if len(list) != 1 || list[0]["message_count"] != 2.0 {
		t.Fatalf("mailbox %v, want one thread with 2 messages", list)
	}
	// Keys are scoped to the sender: another sender's identical key is its own.
	carol, _ := env.CreateObject(t, nil)
	other := env.Send(t, Request{Method: "POST", Path: "/api/messages", Headers: map[string]string{"Idempotency-Key": "order-1"},
		Body: map[string]any{"from_hash": carol, "to_hash": bob, "kind": "request", "body": "ship it"}}).Expect(t, 201)
	if other.Header.Get("Idempotent-Replayed") != "" || Str(t, other.JSON(t), "id") == Str(t, first.JSON(t), "id") {
		t.Fatal("another sender's key replayed alice's send")
	}
}

// TestConcurrentSendsAcrossReplicas runs two mailbox-svc instances on one database and sends 200
// messages to one thread at once, in both directions, while the recipient reads: every count stays
// exact.
func TestConcurrentSendsAcrossReplicas(t *testing.T) {
	t.Parallel()
	env := Start(t, WithReplicas("mailbox-svc", 2))
	alice, aliceKey := env.CreateObject(t, nil)
	bob, bobKey := env.CreateObject(t, nil)
	threadID := Str(t, sendMessage(t, env, alice, bob, "", "start"), "thread_id")

	const sends, toAlice, workers = 200, 50, 16
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				from, to := alice, bob
				if i < toAlice {
					from, to = bob, alice
				}
				sendMessage(t, env, from, to, threadID, "message "+strconv.Itoa(i))
				if i%40 == 0 { // bob reads while messages arrive
					env.Do(t, "GET", "/api/threads/"+threadID+"?limit=1", bobKey, nil).Expect(t, 200)
				}
			}
		})
	}
	for i := range sends {
		jobs <- i
	}
	close(jobs)
	wg.Wait()

	total := float64(sends + 1)
	// Every send is counted when its 201 returns; the first page is alice's own first message, so
	// her read marks nothing.
	a := env.Do(t, "GET", "/api/threads/"+threadID+"?limit=1", aliceKey, nil).Expect(t, 200).JSON(t)
	if a["message_count"] != total || a["unread_count"] != float64(toAlice) {
		t.Fatalf("alice sees %v messages, %v unread; want %v and %d", a["message_count"], a["unread_count"], total, toAlice)
	}
	// Bob reads both pages; each marks its inbound messages read.
	th := env.Do(t, "GET", "/api/threads/"+threadID+"?limit=200", bobKey, nil).Expect(t, 200).JSON(t)
	last := env.Do(t, "GET", "/api/threads/"+threadID+"?limit=200&cursor="+Str(t, th, "next_cursor"), bobKey, nil).Expect(t, 200).JSON(t)
	if last["message_count"] != total || last["unread_count"] != 0.0 {
		t.Fatalf("bob's read of the last page shows %v messages, %v unread; want %v and 0", last["message_count"], last["unread_count"], total)
	}
	if b := summaryOf(t, env, bob, bobKey, threadID); b["unread_count"] != 0.0 {
		t.Fatalf("bob's unread after reading: %v", b["unread_count"])
	}
	// Every inbound message of bob carries a read time, over both pages.
	seen, unreadInbound := 0, 0
	for _, page := range []map[string]any{th, last} {
		for _, m := range messagesOf(page) {
			seen++
			if m["to_hash"] == bob && m["read_at"] == nil {
				unreadInbound++
			}
		}
	}
	if seen != sends+1 || unreadInbound != 0 {
		t.Fatalf("paged %d messages with %d inbound unread; want %d and 0", seen, unreadInbound, sends+1)
	}
	// Both replicas took sends.
	for _, base := range strings.Split(env.Stack.ServiceURLs["mailbox-svc"], ",") {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !strings.Contains(string(body), `route="/api/messages",status="201"`) {
			t.Errorf("replica %s served no send", base)
		}
	}
}

func TestMessageIngressRateLimits(t *testing.T) {
	t.Parallel()
	env := Start(t, WithEnv("RATE_MESSAGES_PER_MIN", "3"), WithEnv("RATE_MESSAGES_BURST", "3"))
	alice, _ := env.CreateObject(t, nil)
	bob, _ := env.CreateObject(t, nil)
	for range 3 {
		sendMessage(t, env, alice, bob, "", "hi")
	}
	resp := env.Do(t, "POST", "/api/messages", "", map[string]any{"from_hash": alice, "to_hash": bob, "kind": "note", "body": "hi"})
	resp.ExpectError(t, 429, "RATE_LIMITED")
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || secs < 1 || secs > 60 {
		t.Fatalf("Retry-After = %q", resp.Header.Get("Retry-After"))
	}

	perRecipient := Start(t, WithEnv("RATE_RECIPIENT_PER_MIN", "2"), WithEnv("RATE_RECIPIENT_BURST", "2"))
	alice, _ = perRecipient.CreateObject(t, nil)
	bob, _ = perRecipient.CreateObject(t, nil)
	carol, _ := perRecipient.CreateObject(t, nil)
	for range 2 {
		sendMessage(t, perRecipient, alice, bob, "", "hi")
	}
	resp = perRecipient.Do(t, "POST", "/api/messages", "", map[string]any{"from_hash": carol, "to_hash": bob, "kind": "note", "body": "hi"})
	resp.ExpectError(t, 429, "RATE_LIMITED")
	if resp.Header.Get("Retry-After") == "" {
		t.Fatal("a 429 without Retry-After")
	}
	sendMessage(t, perRecipient, alice, carol, "", "another recipient has its own budget")
}

func TestIdempotencyKeysExpire(t *testing.T) {
	t.Parallel()
	env := Start(t, WithEnv("IDEMPOTENCY_TTL", "1s"), WithEnv("IDEMPOTENCY_SWEEP_INTERVAL", "200ms"))
	alice, _ := env.CreateObject(t, nil)
	bob, bobKey := env.CreateObject(t, nil)
	send := func(body string) *Response {
		return env.Send(t, Request{Method: "POST", Path: "/api/messages", Headers: map[string]string{"Idempotency-Key": "k"},
			Body: map[string]any{"from_hash": alice, "to_hash": bob, "kind": "note", "body": body}})
	}
	send("first").Expect(t, 201)
	env.Eventually(t, func() bool {
		r := send("second")
		if r.Status != 201 && r.Status != 409 {
			t.Fatalf("send answered %d: %s", r.Status, r.Body)
		}
		return r.Status == 201
	}, "the expired key is forgotten")
	threadsCounting(t, env, bob, bobKey, "", 2) // the first send's and the second's
}

// TestRulesChangeBindsSendsAtItsAnswer: a rules write binds the first thread opened after its
// 200, and every later one: mailbox-svc asks context-svc while its projection of the rules (fed by
// context.updated) has not applied the write.
func TestRulesChangeBindsSendsAtItsAnswer(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, _ := env.CreateObject(t, nil)
	bob, bobKey := env.CreateObject(t, map[string]any{"rules": map[string]any{"participant_admission": map[string]any{"mode": "owner_approval"}}})
	admission := func() any {
		thread := Str(t, sendMessage(t, env, alice, bob, "", "may I?"), "thread_id")
		return env.Do(t, "GET", "/api/threads/"+thread, bobKey, nil).Expect(t, 200).JSON(t)["participant_admission"]
	}
	if got := admission(); got != "owner_approval" {
		t.Fatalf("first thread: participant_admission = %v, want the rules given at creation", got)
	}
	for _, c := range []struct{ body, want string }{
		{`{"participant_admission":{"mode":"open"}}`, "open"},
		{`{"participant_admission":{"mode":"approval"}}`, "approval"},
		{`{}`, "open"}, // no mode: the default
	} {
		env.Do(t, "PUT", "/api/objects/"+bob+"/rules", bobKey, map[string]any{"body": c.body}).Expect(t, 200)
		for i := range 3 {
			if got := admission(); got != c.want {
				t.Fatalf("thread %d after the rules %s answered: participant_admission = %v, want %s", i, c.body, got, c.want)
			}
		}
	}
}

// TestSendIsListedWhenItsAnswerReturns: 16 senders write to one recipient at once, opening threads
// and replying in them; after every 201 the recipient's mailbox, read at once, lists the thread
// with at least the messages that sender put in it, and the thread shows the message.
func TestSendIsListedWhenItsAnswerReturns(t *testing.T) {
	t.Parallel()
	env := Start(t)
	bob, bobKey := env.CreateObject(t, nil)
	const senders, threadsEach, messagesEach = 16, 3, 3
	hashes := make([]string, senders)
	for i := range hashes {
		hashes[i], _ = env.CreateObject(t, nil)
	}
	var wg sync.WaitGroup
	for _, from := range hashes {
		wg.Go(func() {
			for range threadsEach {
				thread := ""
				for n := 1; n <= messagesEach; n++ {
					sent := sendMessage(t, env, from, bob, thread, fmt.Sprint("message ", n))
					thread = Str(t, sent, "thread_id")
					listed := false
					for _, th := range threadsOf(t, env, bob, bobKey, "?limit=200") {
						if th["id"] == thread {
							listed = true
							if c, _ := th["message_count"].(float64); c < float64(n) {
								t.Errorf("thread %s listed with %v messages right after its message %d", thread, th["message_count"], n)
							}
						}
					}
					if !listed {
						t.Errorf("thread %s not in the recipient's mailbox right after the 201 of its message %d", thread, n)
					}
					msgs := messagesOf(env.Do(t, "GET", "/api/threads/"+thread+"?limit=200", bobKey, nil).Expect(t, 200).JSON(t))
					if len(msgs) < n || !slices.ContainsFunc(msgs, func(m map[string]any) bool { return m["id"] == sent["id"] }) {
						t.Errorf("thread %s does not show message %v right after its 201", thread, sent["id"])
					}
				}
			}
		})
	}
	wg.Wait()
	threadsCounting(t, env, bob, bobKey, "?limit=200", senders*threadsEach)
}
