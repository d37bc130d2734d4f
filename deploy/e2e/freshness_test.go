package e2e

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/pkg/freshness"
)

// TestFrontDoorRefusesWritesWhileAProjectionIsBehind: while a consumer group reports a lag past
// LAG_LIMIT (here a report of a paused group, written where the consuming replicas write
// theirs), the public writes that feed the projections (a message, an A2A send, a feed item, a
// new object) are refused with 503 UNAVAILABLE and Retry-After, while reads, an owner's block and
// a graph write keep working; once the group is caught up they are taken again.
func TestFrontDoorRefusesWritesWhileAProjectionIsBehind(t *testing.T) {
	t.Parallel()
	env := Start(t, WithEnv("LAG_LIMIT", "2s"))
	box, boxKey := env.CreateObject(t, nil)
	sender, senderKey := env.CreateObject(t, nil)
	enableFeed(t, env, box, boxKey)
	threadID := Str(t, sendMessage(t, env, sender, box, "", "hello"), "thread_id")

	opts, err := redis.ParseURL(env.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	paused := freshness.NewReporter(rdb)
	if err := paused.Report(ctx, map[string]time.Duration{"graph-svc.messages": 9 * time.Second}, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	writes := []Request{
		{Method: "POST", Path: "/api/messages", Body: map[string]any{"from_hash": sender, "to_hash": box, "kind": "note", "body": "hi"}},
		{Method: "POST", Path: "/api/objects/" + box + "/a2a/message:send", Body: map[string]any{"message": map[string]any{
			"messageId": "m1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hi"}}, "metadata": map[string]any{"from_hash": sender}}}},
		{Method: "POST", Path: "/api/feeds/" + box + "/items", Key: senderKey, Body: map[string]any{"title": "t", "body": "b"}},
		{Method: "POST", Path: "/api/objects", Body: map[string]any{}},
	}
	env.Eventually(t, func() bool {
		return env.Send(t, writes[0]).Status == http.StatusServiceUnavailable
	}, "the gateway sees the lag")
	for _, w := range writes {
		r := env.Send(t, w)
		r.ExpectError(t, http.StatusServiceUnavailable, "UNAVAILABLE")
		if secs, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || secs < 1 || secs > 30 {
			t.Fatalf("%s %s: Retry-After %q, want 1–30 seconds", w.Method, w.Path, r.Header.Get("Retry-After"))
		}
	}
	// Reads, an owner's control and the graph keep working.
	env.Do(t, "GET", "/api/objects/"+box, "", nil).Expect(t, 200)
	env.Do(t, "GET", "/api/threads/"+threadID, boxKey, nil).Expect(t, 200)
	env.Do(t, "GET", "/api/feeds/"+box+"/items", "", nil).Expect(t, 200)
	env.Do(t, "POST", "/api/threads/"+threadID+"/nodes", senderKey, map[string]any{"type": "question", "body": "?"}).Expect(t, 201)
	env.Do(t, "POST", "/api/objects/"+box+"/sender-blocks", boxKey, map[string]any{"blocked_hash": sender}).Expect(t, 201)
	env.Do(t, "DELETE", "/api/objects/"+box+"/sender-blocks/"+sender, boxKey, nil).Expect(t, 200)

	// The group caught up: its report is withdrawn, and the writes are taken again.
	if err := paused.Withdraw(ctx, []string{"graph-svc.messages"}); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, func() bool {
		return env.Send(t, writes[0]).Status == http.StatusCreated
	}, "the gateway takes messages again")
	env.Send(t, writes[2]).Expect(t, http.StatusCreated)
	env.Send(t, writes[3]).Expect(t, http.StatusCreated)
}

// TestConsumerLagGauge: every consuming service exports svc_consumer_lag_seconds for each of its
// consumer groups on /metrics, and reports it to the gateway through the shared hash.
func TestConsumerLagGauge(t *testing.T) {
	t.Parallel()
	env := Start(t)
	a, _ := env.CreateObject(t, nil)
	b, _ := env.CreateObject(t, nil)
	sendMessage(t, env, a, b, "", "hello")
	wiring := env.Stack.Wiring()
	for name, urls := range env.Stack.ServiceURLs {
		if len(wiring[name].Consumes) == 0 {
			continue
		}
		resp, err := http.Get(strings.Split(urls, ",")[0] + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := `svc_consumer_lag_seconds{group="`
		if !strings.Contains(string(body), want) || !strings.Contains(string(body), `service="`+name+`"`) {
			t.Errorf("%s /metrics has no svc_consumer_lag_seconds of its groups", name)
		}
	}
	opts, err := redis.ParseURL(env.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	env.Eventually(t, func() bool {
		fields, err := rdb.HKeys(context.Background(), freshness.Key).Result()
		if err != nil {
			return false
		}
		reported := map[string]bool{}
		for _, f := range fields {
			service, _, _ := strings.Cut(f, ".")
			reported[service] = true
		}
		for name := range env.Stack.ServiceURLs {
			if len(wiring[name].Consumes) > 0 && !reported[name] {
				return false
			}
		}
		return true
	}, "every consuming service reports its groups' lag to "+freshness.Key)
}
