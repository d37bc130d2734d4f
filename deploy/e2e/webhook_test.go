package e2e

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestWebhookSubscriptions covers owner webhooks through the gateway: create (secret shown once),
// list, read, stored headers (never returned), delete, and the refusals.
func TestWebhookSubscriptions(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	env := webhookEnv(t, rcv)
	hash, key := env.CreateObject(t, nil)
	other, otherKey := env.CreateObject(t, nil)
	base := "/api/objects/" + hash + "/webhooks"

	created := env.Do(t, "POST", base, key, map[string]any{"callback_url": rcv.URL("/a")}).Expect(t, 201).JSON(t)
	id, secret := Str(t, created, "id"), Str(t, created, "secret")
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret %q is not a whsec_ secret", secret)
	}
	if evs := created["events"].([]any); len(evs) != 6 {
		t.Errorf("default events = %v, want all six", evs)
	}
	second, _ := createWebhook(t, env, hash, key, map[string]any{"callback_url": rcv.URL("/b"), "events": []string{"message", "message"}})

	for name, body := range map[string]map[string]any{
		"http":      {"callback_url": "http://example.com/hook"},
		"not a URL": {"callback_url": "hook"},
		"metadata":  {"callback_url": "https://169.254.169.254/latest"},
	} {
		if got := env.Do(t, "POST", base, key, body); got.Status != 400 || got.ErrorCode(t) != "INVALID_URL" {
			t.Errorf("%s: status %d body %s, want 400 INVALID_URL", name, got.Status, got.Body)
		}
	}
	env.Do(t, "POST", base, key, map[string]any{"callback_url": rcv.URL("/"), "events": []string{"thread.created"}}).ExpectError(t, 400, "INVALID_KIND")
	env.Do(t, "POST", base, key, map[string]any{"events": []string{"message"}}).ExpectError(t, 400, "MISSING_FIELD")
	env.Do(t, "POST", base, key, map[string]any{"callback_url": rcv.URL("/"), "secret": "x"}).ExpectError(t, 400, "UNKNOWN_FIELD")
	env.Do(t, "POST", base, otherKey, map[string]any{"callback_url": rcv.URL("/")}).ExpectError(t, 403, "FORBIDDEN")
	env.Do(t, "GET", base+"/"+id, otherKey, nil).ExpectError(t, 403, "FORBIDDEN")
	env.Do(t, "GET", "/api/objects/"+other+"/webhooks/"+id, otherKey, nil).ExpectError(t, 404, "NOT_FOUND")

	const headerValue = "Bearer receiver-token-5f1e"
	patched := env.Do(t, "PATCH", base+"/"+id, key, map[string]any{"headers": map[string]string{"Authorization": headerValue, "X-Tenant": "t1"}}).Expect(t, 200)
	if strings.Contains(string(patched.Body), headerValue) || strings.Contains(string(patched.Body), "whsec_") {
		t.Fatalf("PATCH answer shows a header value or the secret: %s", patched.Body)
	}
	if names := patched.JSON(t)["header_names"].([]any); !slices.Equal(names, []any{"Authorization", "X-Tenant"}) {
		t.Errorf("header_names = %v", names)
	}
	for _, bad := range []map[string]string{{"webhook-signature": "x"}, {"Bad Name": "x"}, {"X-Ok": "a\r\nInjected: 1"}} {
		env.Do(t, "PATCH", base+"/"+id, key, map[string]any{"headers": bad}).ExpectError(t, 400, "INVALID_REQUEST")
	}
	st := env.Do(t, "GET", base+"/"+id, key, nil).Expect(t, 200)
	list := env.Do(t, "GET", base, key, nil).Expect(t, 200)
	for _, r := range []*Response{st, list} {
		if strings.Contains(string(r.Body), headerValue) || strings.Contains(string(r.Body), secret) {
			t.Fatalf("a read shows a header value or the secret: %s", r.Body)
		}
	}
	if h := st.JSON(t)["health"].(map[string]any); h["status"] != "enabled" {
		t.Errorf("health = %v", h)
	}
	var ids []string
	for _, w := range list.JSON(t)["webhooks"].([]any) {
		ids = append(ids, w.(map[string]any)["id"].(string))
	}
	if !slices.Equal(ids, []string{id, second}) {
		t.Errorf("list = %v, want [%s %s]", ids, id, second)
	}
	if page := env.Do(t, "GET", base+"?limit=1", key, nil).Expect(t, 200).JSON(t); page["next_cursor"] == nil {
		t.Errorf("a page of one of two webhooks has no next_cursor: %v", page)
	}
	if strings.Contains(env.Logs(), headerValue) || strings.Contains(env.Logs(), secret) {
		t.Fatal("the logs hold a stored header value or the secret")
	}
	env.Do(t, "DELETE", base+"/"+second, key, nil).Expect(t, http.StatusOK)
	env.Do(t, "GET", base+"/"+second, key, nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "DELETE", base+"/"+second, key, nil).ExpectError(t, 404, "NOT_FOUND")
}

// TestWebhookDelivery delivers an owner's events to a local HTTPS receiver, in order, signed as
// Standard Webhooks (verified by its reference library), with the stored headers.
func TestWebhookDelivery(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	env := webhookEnv(t, rcv)
	hash, key := env.CreateObject(t, nil)
	sender, senderKey := env.CreateObject(t, nil)
	id, secret := createWebhook(t, env, hash, key, map[string]any{"callback_url": rcv.URL("/hook"), "events": []string{"message", "context_updated"}})
	const headerValue = "Bearer receiver-token-77aa"
	env.Do(t, "PATCH", "/api/objects/"+hash+"/webhooks/"+id, key, map[string]any{"headers": map[string]string{"Authorization": headerValue}}).Expect(t, 200)

	msg := sendMessage(t, env, sender, hash, "", "first")
	env.Do(t, "PUT", "/api/objects/"+hash+"/llm.txt", key, map[string]any{"body": "# Updated\n\nnew profile"}).Expect(t, 200)
	sendMessage(t, env, sender, hash, Str(t, msg, "thread_id"), "second")
	// Events of other objects and unselected events reach no one.
	env.Do(t, "PUT", "/api/objects/"+sender+"/llm.txt", senderKey, map[string]any{"body": "# Sender"}).Expect(t, 200)

	got := rcv.waitFor(t, env, 3)
	// An object's events of one kind reach it in order; the profile's event comes from another
	// service, on another topic, so only the messages' order is promised.
	var messages []received
	var types []string
	for i, r := range got[:3] {
		verify(t, secret, r)
		if r.Header.Get("x-svc-event") != r.Payload.Type {
			t.Errorf("delivery %d: type %q, x-svc-event %q", i, r.Payload.Type, r.Header.Get("x-svc-event"))
		}
		types = append(types, r.Payload.Type)
		switch r.Payload.Type {
		case "message":
			messages = append(messages, r)
		case "context_updated":
			if r.Payload.Data["version"] != float64(2) {
				t.Errorf("context_updated payload: %s", r.Body)
			}
		}
		if r.Header.Get("webhook-id") != r.Payload.ID || !strings.HasPrefix(r.Payload.ID, "evt_") {
			t.Errorf("delivery %d: webhook-id %q, payload id %q", i, r.Header.Get("webhook-id"), r.Payload.ID)
		}
		if r.Header.Get("Authorization") != headerValue {
			t.Errorf("delivery %d: stored header not sent (Authorization %q)", i, r.Header.Get("Authorization"))
		}
		if r.Payload.Data["hash"] != hash || r.Payload.Timestamp == "" {
			t.Errorf("delivery %d: payload %s", i, r.Body)
		}
		if strings.Contains(string(r.Body), key) || strings.Contains(string(r.Body), "whsec_") || strings.Contains(string(r.Body), "object_id") {
			t.Errorf("delivery %d carries a key, a secret or an internal id: %s", i, r.Body)
		}
	}
	slices.Sort(types)
	if !slices.Equal(types, []string{"context_updated", "message", "message"}) {
		t.Fatalf("delivered %v, want two messages and one context_updated", types)
	}
	if messages[0].Payload.Data["body"] != "first" || messages[1].Payload.Data["body"] != "second" || messages[0].Payload.Data["message_id"] != msg["id"] {
		t.Errorf("message payloads out of order or incomplete: %s / %s", messages[0].Body, messages[1].Body)
	}
	env.Eventually(t, func() bool {
		ds := deliveriesOf(t, webhookStatus(t, env, hash, key, id))
		return len(ds) == 3 && ds[0]["status"] == "succeeded" && ds[2]["status"] == "succeeded"
	}, "three succeeded deliveries in the delivery log")
	st := webhookStatus(t, env, hash, key, id)
	if d := deliveriesOf(t, st)[0]; !slices.Equal(attemptCodes(d), []int{204}) || d["next_attempt_at"] != nil {
		t.Errorf("latest delivery: %v", d)
	}
	if h := st["health"].(map[string]any); h["last_success_at"] == nil || h["failing_since"] != nil {
		t.Errorf("health after successes: %v", h)
	}
	if len(rcv.Got()) != 3 {
		t.Errorf("the receiver got %d deliveries, want 3", len(rcv.Got()))
	}
	if strings.Contains(env.Logs(), headerValue) {
		t.Fatal("the logs hold a stored header value")
	}
}
