package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"
)

// outageRetryFor is how long the consumers of an outage test retry an event before they park it
// as a dead letter: short, so that a consumer needing the stopped service would dead-letter
// within the test rather than an hour later.
const outageRetryFor = 2 * time.Second

// activityOf counts the public activity entries of a box of the given type.
func activityOf(t testing.TB, env *Env, hash, typ string) int {
	t.Helper()
	n := 0
	for _, it := range env.Do(t, "GET", "/api/activity?limit=200", "", nil).Expect(t, 200).JSON(t)["items"].([]any) {
		if m := it.(map[string]any); m["hash"] == hash && m["type"] == typ {
			n++
		}
	}
	return n
}

// graphMessages returns the message ids of a thread's message nodes.
func graphMessages(t testing.TB, env *Env, key, threadID string) []string {
	t.Helper()
	nodes, _ := graphOf(t, env, key, threadID, "")
	var out []string
	for _, n := range nodes {
		if id, ok := n["message_id"].(string); ok {
			out = append(out, id)
		}
	}
	return out
}

// noDeadLetters fails the test for every dead letter of the services.
func noDeadLetters(t *testing.T, env *Env, services []string) {
	t.Helper()
	for _, name := range services {
		var out struct {
			DeadEvents []map[string]any `json:"dead_events"`
		}
		env.internal(t, name, "GET", "/internal/v1/dead-events", true).Expect(t, 200).Decode(t, &out)
		for _, d := range out.DeadEvents {
			t.Errorf("%s dead-lettered %v (%v): %v", name, d["event_type"], d["group"], d["error"])
		}
	}
}

// TestEventsFlowWithIdentityDown: with identity-svc stopped, hashes and keys already resolved
// keep answering from Redis, and every consumer keeps producing from events, out of its own
// projections: webhook deliveries, the network's feed rows and activity, graph nodes. No event
// is dead-lettered, although the consumers give up on an event after two seconds.
func TestEventsFlowWithIdentityDown(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	env := webhookEnv(t, rcv, WithEnv("CONSUMER_RETRY_FOR", outageRetryFor.String()), WithEnv("CONSUMER_RETRY_MIN", "50ms"),
		WithEnv("CONSUMER_RETRY_MAX", "200ms"))
	alice, aliceKey := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Alice\n"})
	bob, bobKey := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Bob\n"})
	createWebhook(t, env, bob, bobKey, map[string]any{"callback_url": rcv.URL("/hook"), "events": []string{"message"}})
	enableFeed(t, env, bob, bobKey)

	// Warm up: the hashes and keys used below are resolved once (and cached), and every
	// projection has seen both objects.
	first := sendMessage(t, env, alice, bob, "", "before")
	thread := Str(t, first, "thread_id")
	publish(t, env, bob, bobKey, "item before")
	rcv.waitFor(t, env, 1)
	env.Eventually(t, func() bool { return slices.Contains(graphMessages(t, env, aliceKey, thread), Str(t, first, "id")) }, "the first message in the graph")
	env.Eventually(t, func() bool { return activityOf(t, env, bob, "feed.item_published") == 1 }, "the first item in the activity")
	env.Eventually(t, func() bool { return activityOf(t, env, bob, "message.created") == 1 }, "the first message in the activity")
	env.Do(t, "GET", "/api/threads/"+thread, bobKey, nil).Expect(t, 200)

	if err := env.Stack.StopReplica("identity-svc", 0); err != nil {
		t.Fatal(err)
	}
	// Proof that it is down: creating an object needs identity-svc.
	env.Do(t, "POST", "/api/objects", "", map[string]any{}).ExpectError(t, http.StatusServiceUnavailable, "UNAVAILABLE")

	reply := Str(t, sendMessage(t, env, alice, bob, thread, "during, a reply"), "id")
	opened := sendMessage(t, env, alice, bob, "", "during, a new thread")
	other := Str(t, opened, "thread_id")
	answer := Str(t, sendMessage(t, env, bob, alice, thread, "during, bob answers"), "id")
	publish(t, env, bob, bobKey, "item during")
	sent := time.Now()

	got := rcv.waitFor(t, env, 3)
	var bodies []string
	for _, r := range got {
		bodies = append(bodies, fmt.Sprint(r.Payload.Data["body"]))
	}
	slices.Sort(bodies)
	if want := []string{"before", "during, a new thread", "during, a reply"}; !slices.Equal(bodies, want) {
		t.Errorf("bob's webhook got %v, want %v (bob's answer is alice's event)", bodies, want)
	}
	env.Eventually(t, func() bool {
		return slices.Contains(graphMessages(t, env, aliceKey, thread), reply) &&
			slices.Contains(graphMessages(t, env, bobKey, thread), answer)
	}, "the replies in the thread's graph")
	env.Eventually(t, func() bool { return slices.Contains(graphMessages(t, env, bobKey, other), Str(t, opened, "id")) },
		"the new thread's message in its graph")
	env.Eventually(t, func() bool {
		rows, _ := networkFeed(t, env, "?kind=item")
		return len(rows) > 0 && rows[0]["title"] == "item during"
	}, "the item in the network's feed")
	env.Eventually(t, func() bool { return activityOf(t, env, bob, "message.created") == 3 }, "bob's messages in the activity")
	env.Eventually(t, func() bool { return activityOf(t, env, alice, "message.created") == 1 }, "alice's message in the activity")

	// A consumer that needed identity-svc would have parked its event by now.
	time.Sleep(time.Until(sent.Add(2 * outageRetryFor)))
	var services []string
	for name := range env.Stack.Wiring() {
		if name != "identity-svc" {
			services = append(services, name)
		}
	}
	slices.Sort(services)
	noDeadLetters(t, env, services)

	// identity-svc back: it dead-lettered nothing either, and new objects are created again.
	if err := env.Stack.RestartReplica(context.Background(), "identity-svc", 0); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, func() bool {
		return env.Do(t, "POST", "/api/objects", "", map[string]any{}).Status == http.StatusCreated
	},
		"object creation with identity-svc back")
	noDeadLetters(t, env, []string{"identity-svc"})
}
