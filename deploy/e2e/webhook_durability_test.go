package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestWebhookRestartWithPendingDeliveries restarts webhook-svc while a delivery waits for its
// retry and while an event waits in Kafka: both are delivered by the restarted service.
func TestWebhookRestartWithPendingDeliveries(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	env := webhookEnv(t, rcv, WithEnv("WEBHOOK_RETRY_SCHEDULE", "2s,2s"))
	hash, key := env.CreateObject(t, nil)
	sender, _ := env.CreateObject(t, nil)
	id, secret := createWebhook(t, env, hash, key, map[string]any{"callback_url": rcv.URL("/r"), "events": []string{"message"}})
	rcv.setAnswer(func(n int, _ http.ResponseWriter) int {
		if n == 0 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	sendMessage(t, env, sender, hash, "", "pending across a restart")
	rcv.waitFor(t, env, 1)
	// The restart comes once the failed attempt is recorded, while the delivery waits for its
	// retry (a restart during the attempt itself would abandon its outcome, not the delivery).
	env.Eventually(t, func() bool {
		ds := deliveriesOf(t, webhookStatus(t, env, hash, key, id))
		return len(ds) == 1 && slices.Equal(attemptCodes(ds[0]), []int{503})
	}, "the first attempt's 503 to be recorded")
	if err := env.Stack.RestartReplica(context.Background(), "webhook-svc", 0); err != nil {
		t.Fatal(err)
	}
	sendMessage(t, env, sender, hash, "", "sent around the restart")
	got := rcv.waitFor(t, env, 3)
	bodies := map[any]int{}
	for _, r := range got {
		verify(t, secret, r)
		bodies[r.Payload.Data["body"]]++
	}
	if bodies["pending across a restart"] != 2 || bodies["sent around the restart"] != 1 {
		t.Fatalf("deliveries by body: %v", bodies)
	}
	env.Eventually(t, func() bool {
		ds := deliveriesOf(t, webhookStatus(t, env, hash, key, id))
		return len(ds) == 2 && ds[0]["status"] == "succeeded" && ds[1]["status"] == "succeeded"
	}, "both deliveries to succeed")
	if codes := attemptCodes(deliveriesOf(t, webhookStatus(t, env, hash, key, id))[1]); !slices.Equal(codes, []int{503, 200}) {
		t.Errorf("the delivery pending across the restart made attempts %v, want 503 then 200", codes)
	}
}

// TestWebhookReplicasSurviveAKill runs two webhook-svc replicas under a steady load of messages
// to several webhooks, stops one of them mid-load, and counts deliveries: every message arrives
// at least once, and none arrived twice before the stop.
func TestWebhookReplicasSurviveAKill(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	// A first attempt is made by its lane without a claim and must be recorded within its lease,
	// or the schedule's poll makes it again (at least once). The suite's 3 s lease leaves the
	// record half a second after the POST, which a store under the whole suite's load on a
	// 2-core machine can overrun: this test counts duplicates, so its lease leaves the record
	// time, as production's 60 s does.
	env := webhookEnv(t, rcv, WithReplicas("webhook-svc", 2), WithEnv("WEBHOOK_CLAIM_LEASE", "10s"))
	// A slow endpoint keeps attempts in flight when the replica stops.
	rcv.setAnswer(func(int, http.ResponseWriter) int { time.Sleep(150 * time.Millisecond); return http.StatusOK })
	const objects, messages = 6, 60
	sender, _ := env.CreateObject(t, nil)
	hashes := make([]string, objects)
	for i := range hashes {
		var key string
		hashes[i], key = env.CreateObject(t, nil)
		createWebhook(t, env, hashes[i], key, map[string]any{"callback_url": rcv.URL(fmt.Sprintf("/o%d", i)), "events": []string{"message"}})
	}
	var killedAt time.Time
	var mu sync.Mutex
	sent := map[string]bool{}
	for i := range messages {
		if i == messages/2 {
			if err := env.Stack.StopReplica("webhook-svc", 0); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			killedAt = time.Now()
			mu.Unlock()
		}
		m := sendMessage(t, env, sender, hashes[i%objects], "", fmt.Sprintf("load %d", i))
		sent[Str(t, m, "id")] = true
		time.Sleep(50 * time.Millisecond)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		seen := map[string]bool{}
		for _, r := range rcv.Got() {
			seen[fmt.Sprint(r.Payload.Data["message_id"])] = true
		}
		missing := 0
		for id := range sent {
			if !seen[id] {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d messages were never delivered", missing, messages)
		}
		time.Sleep(100 * time.Millisecond)
	}
	before, total := map[string]int{}, map[string]int{}
	for _, r := range rcv.Got() {
		id := fmt.Sprint(r.Payload.Data["message_id"])
		total[id]++
		if r.At.Before(killedAt) {
			before[id]++
		}
	}
	for id, n := range before {
		if n != 1 {
			t.Errorf("message %s was delivered %d times before the stop", id, n)
		}
	}
	dups := 0
	for _, n := range total {
		dups += n - 1
	}
	t.Logf("%d messages, %d delivered before the stop, %d redelivered after it", messages, len(before), dups)
	if len(before) == 0 {
		t.Error("nothing was delivered before the stop: the load did not run across it")
	}
}
