package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// byPath keeps what a receiver got on one path.
func byPath(rcv *receiver, path string) []received {
	var out []received
	for _, r := range rcv.Got() {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// TestWebhookLanes follows first attempts through the gateway: a webhook deleted or disabled
// while its deliveries are queued receives nothing after the 2xx that deleted or disabled it,
// and a receiver slower than the lease gets each delivery once, counted by webhook-id.
func TestWebhookLanes(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	gates := map[string]chan struct{}{"/deleted": make(chan struct{}), "/disabled": make(chan struct{})}
	var mu sync.Mutex
	rcv.setAnswer(func(n int, w http.ResponseWriter) int {
		got := rcv.Got()
		path := got[n].Path
		mu.Lock()
		gate := gates[path]
		mu.Unlock()
		switch {
		case gate != nil:
			<-gate // held until the test has deleted or disabled the webhook
		case path == "/slow":
			time.Sleep(400 * time.Millisecond)
		}
		return http.StatusNoContent
	})
	env := webhookEnv(t, rcv)
	sender, _ := env.CreateObject(t, nil)

	for _, how := range []string{"deleted", "disabled"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			hash, key := env.CreateObject(t, nil)
			path := "/" + how
			id, _ := createWebhook(t, env, hash, key, map[string]any{"callback_url": rcv.URL(path), "events": []string{"message"}})
			for i := range 6 {
				sendMessage(t, env, sender, hash, "", fmt.Sprintf("queued %d", i))
			}
			env.Eventually(t, func() bool { return len(byPath(rcv, path)) > 0 }, "the first delivery to arrive")
			if how == "deleted" {
				env.Do(t, "DELETE", "/api/objects/"+hash+"/webhooks/"+id, key, nil).Expect(t, 200)
			} else {
				env.Do(t, "PATCH", "/api/objects/"+hash+"/webhooks/"+id, key, map[string]any{"enabled": false}).Expect(t, 200)
			}
			answered := time.Now()
			mu.Lock()
			close(gates[path])
			mu.Unlock()
			time.Sleep(5 * time.Second) // more than a lease (3 s) and a retry: whatever was queued had its chance
			for _, r := range byPath(rcv, path) {
				if r.At.After(answered) {
					t.Errorf("delivery %s arrived %s after the webhook was %s", r.Header.Get("webhook-id"), r.At.Sub(answered), how)
				}
			}
		})
	}

	t.Run("slow receiver", func(t *testing.T) {
		t.Parallel()
		hash, key := env.CreateObject(t, nil)
		createWebhook(t, env, hash, key, map[string]any{"callback_url": rcv.URL("/slow"), "events": []string{"message"}})
		const n = 20 // 8 s of answers on one lane, past the 3 s lease
		for i := range n {
			sendMessage(t, env, sender, hash, "", fmt.Sprintf("slow %d", i))
		}
		ids := func() map[string]int {
			count := map[string]int{}
			for _, r := range byPath(rcv, "/slow") {
				count[r.Header.Get("webhook-id")]++
			}
			return count
		}
		env.Eventually(t, func() bool { return len(ids()) == n }, "every delivery to reach the slow receiver")
		time.Sleep(4 * time.Second) // past another lease: a second sending would have come by now
		for id, c := range ids() {
			if c != 1 {
				t.Errorf("delivery %s was sent %d times, want once", id, c)
			}
		}
	})
}

// TestWebhookQuotas fires 32 creates at once at each quota: none is passed; a stranger filling
// a box's context subscriptions never stops its owner creating webhooks; the owner lists the
// subscriptions to its box and removes one, and the place is free again.
func TestWebhookQuotas(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	env := webhookEnv(t, rcv, WithEnv("WEBHOOK_MAX_PER_OBJECT", "3"), WithEnv("WEBHOOK_MAX_CONTEXT_PER_BOX", "5"),
		WithEnv("WEBHOOK_MAX_CONTEXT_PER_WATCHER", "50"))
	box, boxKey := env.CreateObject(t, nil)
	_, strangerKey := env.CreateObject(t, nil)
	subsPath := "/api/objects/" + box + "/context-subscriptions"

	fire := func(path, key string) (created []string, refused int) {
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := range 32 {
			wg.Go(func() {
				r := env.Do(t, "POST", path, key, map[string]any{"callback_url": rcv.URL(fmt.Sprintf("/q%d", i))})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case r.Status == http.StatusCreated:
					created = append(created, string(r.Body))
				case r.Status == http.StatusConflict && strings.Contains(string(r.Body), `"QUOTA_EXCEEDED"`):
					refused++
				default:
					t.Errorf("create: %d %s", r.Status, r.Body)
				}
			})
		}
		wg.Wait()
		return created, refused
	}
	if created, refused := fire(subsPath, strangerKey); len(created) != 5 || refused != 27 {
		t.Fatalf("32 context subscriptions at once to a box of 5: %d created, %d refused", len(created), refused)
	}
	if created, refused := fire("/api/objects/"+box+"/webhooks", boxKey); len(created) != 3 || refused != 29 {
		t.Fatalf("32 webhooks at once with a quota of 3, the box full of a stranger's subscriptions: %d created, %d refused",
			len(created), refused)
	}

	list := env.Do(t, "GET", subsPath+"?limit=2", boxKey, nil).Expect(t, 200).JSON(t)
	var ids []string
	for {
		for _, s := range list["subscriptions"].([]any) {
			ids = append(ids, s.(map[string]any)["id"].(string))
		}
		next, _ := list["next_cursor"].(string)
		if next == "" {
			break
		}
		list = env.Do(t, "GET", subsPath+"?limit=2&cursor="+next, boxKey, nil).Expect(t, 200).JSON(t)
	}
	if len(ids) != 5 {
		t.Fatalf("the owner listed %d subscriptions to its box, want 5", len(ids))
	}
	env.Do(t, "GET", subsPath+"?cursor=bm90LWEtY3Vyc29y", boxKey, nil).ExpectError(t, 400, "INVALID_REQUEST")
	env.Do(t, "GET", subsPath, strangerKey, nil).ExpectError(t, 403, "FORBIDDEN")
	env.Do(t, "DELETE", subsPath+"?subscription_id="+ids[0], boxKey, nil).Expect(t, 200)
	env.Do(t, "POST", subsPath, strangerKey, map[string]any{"callback_url": rcv.URL("/again")}).Expect(t, 201)
	env.Do(t, "POST", subsPath, strangerKey, map[string]any{"callback_url": rcv.URL("/over")}).ExpectError(t, 409, "QUOTA_EXCEEDED")
}

// TestWebhookDeliveryLogAndRecover fails three deliveries for good, pages them through the log,
// counts them, rotates the secret and recovers: each failed delivery arrives once more, signed
// with the new secret, and a repeated recover sends nothing.
func TestWebhookDeliveryLogAndRecover(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	rcv.setAnswer(func(n int, w http.ResponseWriter) int {
		if n < 3 {
			return http.StatusBadRequest // fails for good at once
		}
		return http.StatusNoContent
	})
	env := webhookEnv(t, rcv)
	sender, _ := env.CreateObject(t, nil)
	hash, key := env.CreateObject(t, nil)
	id, _ := createWebhook(t, env, hash, key, map[string]any{"callback_url": rcv.URL("/log"), "events": []string{"message"}})
	base := "/api/objects/" + hash + "/webhooks/" + id
	since := time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano)
	for i := range 3 {
		sendMessage(t, env, sender, hash, "", fmt.Sprintf("refused %d", i))
	}
	rcv.waitFor(t, env, 3)
	var failed []any
	env.Eventually(t, func() bool {
		failed = env.Do(t, "GET", base+"/attempts?outcome=failed", key, nil).Expect(t, 200).JSON(t)["attempts"].([]any)
		return len(failed) == 3
	}, "three failed deliveries in the log")
	page := env.Do(t, "GET", base+"/attempts?limit=2", key, nil).Expect(t, 200).JSON(t)
	next := Str(t, page, "next_cursor")
	rest := env.Do(t, "GET", base+"/attempts?limit=2&cursor="+next, key, nil).Expect(t, 200).JSON(t)
	if n := len(page["attempts"].([]any)) + len(rest["attempts"].([]any)); n != 3 || rest["next_cursor"] != nil {
		t.Fatalf("two pages of the log held %d attempts (next %v), want 3 and no more", n, rest["next_cursor"])
	}
	env.Do(t, "GET", base+"/attempts?outcome=failed&cursor="+next, key, nil).ExpectError(t, 400, "INVALID_REQUEST")
	env.Do(t, "GET", base+"/attempts?outcome=lost", key, nil).ExpectError(t, 400, "INVALID_REQUEST")
	counts := env.Do(t, "GET", base+"/attempt-counts", key, nil).Expect(t, 200).JSON(t)
	if counts["attempts"] != float64(3) || counts["failed"] != float64(3) || counts["succeeded"] != float64(0) {
		t.Fatalf("counts %v, want 3 attempts, 3 failed", counts)
	}

	rotated := env.Do(t, "POST", base+"/rotate-secret", key, nil).Expect(t, 200).JSON(t)
	secret := Str(t, rotated, "secret")
	r := env.Do(t, "POST", base+"/recover", key, map[string]any{"since": since}).Expect(t, 202).JSON(t)
	if r["recovered"] != float64(3) || r["more"] != false {
		t.Fatalf("recover = %v, want 3 recovered", r)
	}
	got := rcv.waitFor(t, env, 6)
	time.Sleep(time.Second)
	if r := env.Do(t, "POST", base+"/recover", key, map[string]any{"since": since}).Expect(t, 202).JSON(t); r["recovered"] != float64(0) {
		t.Fatalf("the same recover again = %v, want nothing sent again", r)
	}
	time.Sleep(time.Second)
	if all := rcv.Got(); len(all) != 6 {
		t.Fatalf("the receiver got %d deliveries, want 3 refused and 3 recovered", len(all))
	}
	count := map[string]int{}
	for _, d := range got {
		count[d.Header.Get("webhook-id")]++
	}
	for _, d := range got[3:] {
		verify(t, secret, d)
		if count[d.Header.Get("webhook-id")] != 2 {
			t.Errorf("recovered %s was sent %d times in all, want refused once and recovered once", d.Header.Get("webhook-id"), count[d.Header.Get("webhook-id")])
		}
	}
	env.Do(t, "POST", base+"/recover", key, map[string]any{}).ExpectError(t, 400, "MISSING_FIELD")
}

// TestWebhookTroubleLeavesASystemMessage makes an endpoint answer 410 Gone: the webhook is
// disabled and its owner finds a system message saying so in its own mailbox, from itself.
func TestWebhookTroubleLeavesASystemMessage(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	rcv.setAnswer(func(int, http.ResponseWriter) int { return http.StatusGone })
	env := webhookEnv(t, rcv)
	sender, _ := env.CreateObject(t, nil)
	hash, key := env.CreateObject(t, nil)
	id, _ := createWebhook(t, env, hash, key, map[string]any{"callback_url": rcv.URL("/gone"), "events": []string{"message"}})
	sendMessage(t, env, sender, hash, "", "to a gone endpoint")
	var notice map[string]any
	env.Eventually(t, func() bool {
		for _, th := range threadsOf(t, env, hash, key, "?limit=200") {
			full := env.Do(t, "GET", "/api/threads/"+th["id"].(string), key, nil).Expect(t, 200).JSON(t)
			for _, m := range messagesOf(full) {
				if m["kind"] == "system" {
					notice = m
					return true
				}
			}
		}
		return false
	}, "a system message in the owner's mailbox")
	body, _ := notice["body"].(string)
	if !strings.Contains(body, id) || !strings.Contains(body, "disabled") || notice["from_hash"] != hash || notice["to_hash"] != hash {
		t.Fatalf("system message %v; want one from and to the owner naming the disabled webhook %s", notice, id)
	}
	if st := webhookStatus(t, env, hash, key, id); st["health"].(map[string]any)["status"] != "disabled" {
		t.Fatalf("health %v, want disabled", st["health"])
	}
}
