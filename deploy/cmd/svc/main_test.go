package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
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
