package e2e

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// finalDelivery waits until the webhook's only delivery is final and returns it.
func finalDelivery(t *testing.T, env *Env, hash, key, id string) map[string]any {
	t.Helper()
	var d map[string]any
	env.Eventually(t, func() bool {
		ds := deliveriesOf(t, webhookStatus(t, env, hash, key, id))
		if len(ds) == 0 || ds[0]["status"] == "pending" {
			return false
		}
		d = ds[0]
		return true
	}, "the delivery to be final")
	return d
}

// TestWebhookRetries follows the retry rules: 5xx and 429 retried on the schedule honouring
// Retry-After, 401 retried once, 410 disables the subscription, other 4xx fail at once.
func TestWebhookRetries(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	env := webhookEnv(t, rcv)
	sender, _ := env.CreateObject(t, nil)

	t.Run("5xx then Retry-After then success", func(t *testing.T) {
		hash, key := env.CreateObject(t, nil)
		id, secret := createWebhook(t, env, hash, key, map[string]any{"callback_url": rcv.URL("/retry"), "events": []string{"message"}})
		rcv.setAnswer(func(n int, w http.ResponseWriter) int {
			switch n {
			case 0:
				return http.StatusInternalServerError
			case 1:
				w.Header().Set("Retry-After", "2")
				return http.StatusTooManyRequests
			}
			return http.StatusOK
		})
		sendMessage(t, env, sender, hash, "", "retried")
		d := finalDelivery(t, env, hash, key, id)
		if d["status"] != "succeeded" || !slices.Equal(attemptCodes(d), []int{500, 429, 200}) {
			t.Fatalf("delivery = %v, want 500, 429, 200 then succeeded", d)
		}
		got := rcv.Got()
		if gap := got[1].At.Sub(got[0].At); gap < 250*time.Millisecond {
			t.Errorf("first retry after %s, want the schedule's 300ms", gap)
		}
		if gap := got[2].At.Sub(got[1].At); gap < 1900*time.Millisecond {
			t.Errorf("retry after a Retry-After of 2 s came after %s", gap)
		}
		for _, r := range got {
			verify(t, secret, r)
			if r.Header.Get("webhook-id") != got[0].Header.Get("webhook-id") {
				t.Errorf("retries carry different webhook-ids: %q, %q", r.Header.Get("webhook-id"), got[0].Header.Get("webhook-id"))
			}
		}
		st := webhookStatus(t, env, hash, key, id)
		if h := st["health"].(map[string]any); h["failing_since"] != nil || h["last_failure_at"] == nil || h["status"] != "enabled" {
			t.Errorf("health after recovery: %v", h)
		}
	})

	t.Run("schedule exhausted", func(t *testing.T) {
		hash, key := env.CreateObject(t, nil)
		id, _ := createWebhook(t, env, hash, key, map[string]any{"callback_url": rcv.URL("/down"), "events": []string{"message"}})
		rcv.setAnswer(func(int, http.ResponseWriter) int { return http.StatusServiceUnavailable })
		sendMessage(t, env, sender, hash, "", "never")
		d := finalDelivery(t, env, hash, key, id)
		// One attempt and the three retries of the test schedule.
		if d["status"] != "failed" || !slices.Equal(attemptCodes(d), []int{503, 503, 503, 503}) || d["next_attempt_at"] != nil {
			t.Fatalf("delivery = %v, want four 503 attempts then failed", d)
		}
		if h := webhookStatus(t, env, hash, key, id)["health"].(map[string]any); h["failing_since"] == nil {
			t.Errorf("health of a failing endpoint: %v", h)
		}
	})

	t.Run("401 retried once", func(t *testing.T) {
		hash, key := env.CreateObject(t, nil)
		id, _ := createWebhook(t, env, hash, key, map[string]any{"callback_url": rcv.URL("/auth"), "events": []string{"message"}})
		rcv.setAnswer(func(int, http.ResponseWriter) int { return http.StatusUnauthorized })
		sendMessage(t, env, sender, hash, "", "unauthorized")
		d := finalDelivery(t, env, hash, key, id)
		if d["status"] != "failed" || !slices.Equal(attemptCodes(d), []int{401, 401}) {
			t.Fatalf("delivery = %v, want 401 twice then failed", d)
		}
	})

	t.Run("400 fails at once", func(t *testing.T) {
		hash, key := env.CreateObject(t, nil)
		id, _ := createWebhook(t, env, hash, key, map[string]any{"callback_url": rcv.URL("/bad"), "events": []string{"message"}})
		rcv.setAnswer(func(int, http.ResponseWriter) int { return http.StatusBadRequest })
		sendMessage(t, env, sender, hash, "", "refused")
		if d := finalDelivery(t, env, hash, key, id); d["status"] != "failed" || !slices.Equal(attemptCodes(d), []int{400}) {
			t.Fatalf("delivery = %v, want one 400 then failed", d)
		}
	})

	t.Run("410 disables", func(t *testing.T) {
		hash, key := env.CreateObject(t, nil)
		id, _ := createWebhook(t, env, hash, key, map[string]any{"callback_url": rcv.URL("/gone"), "events": []string{"message"}})
		rcv.setAnswer(func(int, http.ResponseWriter) int { return http.StatusGone })
		sendMessage(t, env, sender, hash, "", "gone")
		if d := finalDelivery(t, env, hash, key, id); d["status"] != "failed" || !slices.Equal(attemptCodes(d), []int{410}) {
			t.Fatalf("delivery = %v, want one 410 then failed", d)
		}
		st := webhookStatus(t, env, hash, key, id)
		if h := st["health"].(map[string]any); h["status"] != "disabled" || !strings.Contains(h["disabled_reason"].(string), "410") {
			t.Fatalf("health after 410: %v", h)
		}
		before := len(rcv.Got())
		sendMessage(t, env, sender, hash, "", "after disable")
		// The next event's fan-out is observable only as its absence; a later event to a live
		// webhook of the same object proves the first was consumed.
		// Events of one object are consumed in order, and the earlier one may still reach the live
		// webhook when it was created first (so the receiver answers 200 from now on, or that
		// delivery's 410 would disable the live webhook too); what matters is that the later one
		// arrived.
		rcv.setAnswer(nil)
		createWebhook(t, env, hash, key, map[string]any{"callback_url": rcv.URL("/live"), "events": []string{"message"}})
		sendMessage(t, env, sender, hash, "", "to the live one")
		env.Eventually(t, func() bool {
			return slices.ContainsFunc(rcv.Got(), func(r received) bool {
				return r.Path == "/live" && strings.Contains(string(r.Body), "to the live one")
			})
		}, "the live webhook's delivery")
		if n := len(deliveriesOf(t, webhookStatus(t, env, hash, key, id))); n != 1 {
			t.Errorf("a disabled webhook got %d deliveries, want only the one before", n)
		}
		for _, r := range rcv.Got()[before:] {
			if r.Path == "/gone" {
				t.Errorf("a disabled webhook was delivered to: %s", r.Body)
			}
		}

		// The owner enables it again: a clean health record, and the next event is delivered.
		env.Do(t, "PATCH", "/api/objects/"+hash+"/webhooks/"+id, key, map[string]any{"enabled": true}).Expect(t, 200)
		if h := webhookStatus(t, env, hash, key, id)["health"].(map[string]any); h["status"] != "enabled" || h["disabled_reason"] != nil || h["failing_since"] != nil {
			t.Fatalf("health after enabling: %v", h)
		}
		sendMessage(t, env, sender, hash, "", "back again")
		env.Eventually(t, func() bool {
			return slices.ContainsFunc(rcv.Got(), func(r received) bool {
				return r.Path == "/gone" && strings.Contains(string(r.Body), "back again")
			})
		}, "the enabled webhook's delivery")

		// And disables it.
		env.Do(t, "PATCH", "/api/objects/"+hash+"/webhooks/"+id, key, map[string]any{"enabled": false}).Expect(t, 200)
		if h := webhookStatus(t, env, hash, key, id)["health"].(map[string]any); h["status"] != "disabled" || h["disabled_reason"] != "disabled by its owner" {
			t.Fatalf("health after the owner disabled it: %v", h)
		}
		env.Do(t, "PATCH", "/api/objects/"+hash+"/webhooks/"+id, key, map[string]any{"enabled": "yes"}).ExpectError(t, 400, "INVALID_REQUEST")
	})
}

// TestWebhookReplayAndRotation replays a delivery with the current secret, and checks that both
// secrets sign during a rotation.
func TestWebhookReplayAndRotation(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	env := webhookEnv(t, rcv)
	hash, key := env.CreateObject(t, nil)
	sender, _ := env.CreateObject(t, nil)
	base := "/api/objects/" + hash + "/webhooks/"
	id, oldSecret := createWebhook(t, env, hash, key, map[string]any{"callback_url": rcv.URL("/r"), "events": []string{"message"}})
	sendMessage(t, env, sender, hash, "", "replay me")
	first := rcv.waitFor(t, env, 1)[0]
	verify(t, oldSecret, first)
	d := finalDelivery(t, env, hash, key, id)

	rotated := env.Do(t, "POST", base+id+"/rotate-secret", key, nil).Expect(t, 200).JSON(t)
	newSecret := Str(t, rotated, "secret")
	if newSecret == oldSecret || !strings.HasPrefix(newSecret, "whsec_") {
		t.Fatalf("rotation gave secret %q", newSecret)
	}
	if strings.Contains(string(env.Do(t, "GET", base+id, key, nil).Body), newSecret) {
		t.Fatal("the rotated secret is shown on a read")
	}
	replay := env.Do(t, "POST", base+id+"/deliveries/"+Str(t, d, "id")+"/replay", key, nil).Expect(t, http.StatusAccepted).JSON(t)
	if replay["replay_of"] != d["id"] || replay["event_id"] != d["event_id"] {
		t.Errorf("replay = %v", replay)
	}
	again := rcv.waitFor(t, env, 2)[1]
	verify(t, newSecret, again)
	verify(t, oldSecret, again) // during the overlap both secrets sign
	if sigs := strings.Fields(again.Header.Get("webhook-signature")); len(sigs) != 2 {
		t.Errorf("webhook-signature during rotation = %q, want two signatures", again.Header.Get("webhook-signature"))
	}
	if again.Header.Get("webhook-id") != first.Header.Get("webhook-id") || string(again.Body) != string(first.Body) {
		t.Errorf("the replay is not the same message: %s vs %s", again.Body, first.Body)
	}
	env.Do(t, "POST", base+id+"/deliveries/dlv_unknown/replay", key, nil).ExpectError(t, 404, "NOT_FOUND")
}
