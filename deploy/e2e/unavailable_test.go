package e2e

import (
	"net/http"
	"testing"
)

// TestUnreachableServiceAnswers503WithRetryAfter stops mailbox-svc: the gateway, which cannot
// reach it, answers 503 in the error shape with Retry-After, as the services' own 503s do.
func TestUnreachableServiceAnswers503WithRetryAfter(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, _ := env.CreateObject(t, nil)
	bob, _ := env.CreateObject(t, nil)
	if err := env.Stack.StopReplica("mailbox-svc", 0); err != nil {
		t.Fatal(err)
	}
	res := env.Do(t, "POST", "/api/messages", "", map[string]any{"from_hash": alice, "to_hash": bob, "kind": "note", "body": "hello"})
	res.ExpectError(t, http.StatusServiceUnavailable, "UNAVAILABLE")
	if got := res.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After of the 503 = %q, want 1", got)
	}
	if m := res.JSON(t)["error"].(map[string]any); m["request_id"] == "" || m["message"] == "" {
		t.Errorf("the 503's error shape lacks a message or request id: %v", m)
	}
}
