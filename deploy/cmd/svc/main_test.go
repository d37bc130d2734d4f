package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/svcdev/svc/deploy/e2e"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// TestCommands: create, send, mailbox and read, as a person types them, against a real suite.
func TestCommands(t *testing.T) {
	env := e2e.Start(t)
	ctx := context.Background()
	svc := func(key string, args ...string) map[string]any {
		t.Helper()
		var out bytes.Buffer
		if err := run(ctx, args, env.URL, key, &out); err != nil {
			t.Fatalf("svc %s: %v", strings.Join(args, " "), err)
		}
		var v map[string]any
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatalf("svc %s printed %q: %v", strings.Join(args, " "), out.String(), err)
		}
		return v
	}
	ada := svc("", "create", "-profile", "# Ada")
	bob := svc("", "create")
	sent := svc("", "send", "-from", bob["hash"].(string), "-to", ada["hash"].(string), "-kind", "question", "can you review?")
	// A send is listed in the recipient's mailbox when its 201 returns (docs/api.md).
	box := svc(ada["api_key"].(string), "mailbox", ada["hash"].(string))
	if threads := box["threads"].([]any); len(threads) != 1 || threads[0].(map[string]any)["id"] != sent["thread_id"] {
		t.Fatalf("mailbox %v, want the thread %v", box, sent["thread_id"])
	}
	thread := svc(ada["api_key"].(string), "read", sent["thread_id"].(string))
	if msgs := thread["messages"].([]any); len(msgs) != 1 || msgs[0].(map[string]any)["body"] != "can you review?" {
		t.Fatalf("thread %v", thread)
	}
	var usage usageError
	if err := run(ctx, []string{"send", "-to", "svc_x", "hi"}, env.URL, "", &bytes.Buffer{}); !errors.As(err, &usage) {
		t.Fatalf("send without -from: %v, want a usage error", err)
	}
}

// syncBuffer is a buffer a command writes to while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestWatch: watch -h lists its flags; watch prints each message that arrives with its thread_id,
// which a reply needs, and marks nothing read unless asked to with -mark-read.
func TestWatch(t *testing.T) {
	env := e2e.Start(t)
	var help bytes.Buffer
	if err := run(context.Background(), []string{"watch", "-h"}, env.URL, "", &help); err != nil {
		t.Fatalf("watch -h: %v", err)
	}
	for _, want := range []string{"usage: svc watch", "-mark-read", "-every"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("watch -h printed %q, which lacks %q", help.String(), want)
		}
	}

	ada, adaKey := env.CreateObject(t, nil)
	bob, _ := env.CreateObject(t, nil)
	unread := func() float64 {
		box := env.Do(t, "GET", "/api/objects/"+ada+"/mailbox", adaKey, nil).Expect(t, 200).JSON(t)
		total := 0.0
		for _, th := range box["threads"].([]any) {
			total += th.(map[string]any)["unread_count"].(float64)
		}
		return total
	}
	for _, markRead := range []bool{false, true} {
		args := []string{"watch", ada}
		if markRead {
			args = []string{"watch", "-mark-read", "-every", "50ms", ada}
		}
		ctx, cancel := context.WithCancel(context.Background())
		var out syncBuffer
		done := make(chan error, 1)
		go func() { done <- run(ctx, args, env.URL, adaKey, &out) }()
		// watch prints what arrives once it follows: send until a message shows.
		var sent []map[string]any
		var shown map[string]any
		env.Eventually(t, func() bool {
			m := env.Do(t, "POST", "/api/messages", "", map[string]any{"from_hash": bob, "to_hash": ada, "kind": "note",
				"body": "message " + strconv.Itoa(len(sent)) + " while watching"}).Expect(t, 201).JSON(t)
			sent = append(sent, m)
			line, _, _ := strings.Cut(out.String(), "\n")
			return line != "" && json.Unmarshal([]byte(line), &shown) == nil
		}, "watch printing a message")
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("svc %s: %v", strings.Join(args, " "), err)
		}
		i := slices.IndexFunc(sent, func(m map[string]any) bool { return m["id"] == shown["id"] })
		if i < 0 || shown["thread_id"] != sent[i]["thread_id"] || shown["body"] != sent[i]["body"] || shown["from_hash"] != bob {
			t.Fatalf("svc %s printed %v, want one of the messages sent, with its thread_id", strings.Join(args, " "), shown)
		}
		if n := unread(); markRead && n == float64(len(sent)) {
			t.Errorf("watch -mark-read left all %d messages unread", len(sent))
		} else if !markRead && n != float64(len(sent)) {
			t.Errorf("watch marked messages read: %v of %d unread", n, len(sent))
		}
		// The next round starts from a mailbox with nothing unread.
		for _, m := range sent {
			env.Do(t, "GET", "/api/threads/"+m["thread_id"].(string), adaKey, nil).Expect(t, 200)
		}
	}
}
