package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// TestIdempotencyAnswersOnlyItsCaller: a send's Idempotency-Key record answers the caller that made
// it and no one else. A stranger who names the same sender and key (anonymously, or with a key of
// its own) gets 409 and nothing of the first send: not its thread, message or signature; the same
// for an A2A messageId.
func TestIdempotencyAnswersOnlyItsCaller(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, aliceKey := env.CreateObject(t, nil)
	bob, _ := env.CreateObject(t, nil)
	_, malloryKey := env.CreateObject(t, nil)
	body := map[string]any{"from_hash": alice, "to_hash": bob, "kind": "request", "body": "ship it"}
	send := func(key string) *Response {
		return env.Send(t, Request{Method: "POST", Path: "/api/messages", Key: key, Body: body,
			Headers: map[string]string{"Idempotency-Key": "order-1"}})
	}
	first := send(aliceKey).Expect(t, http.StatusCreated).JSON(t)
	if first["sender_verified"] != true {
		t.Fatalf("alice's own send: %v, want it signed for her", first)
	}
	for name, key := range map[string]string{"anonymous": "", "another object's key": malloryKey} {
		got := send(key)
		got.ExpectError(t, http.StatusConflict, "CONFLICT")
		if strings.Contains(string(got.Body), Str(t, first, "id")) || strings.Contains(string(got.Body), Str(t, first, "thread_id")) {
			t.Errorf("%s naming alice's key got %s, which shows her send", name, got.Body)
		}
	}
	again := send(aliceKey).Expect(t, http.StatusCreated)
	if again.Header.Get("Idempotent-Replayed") != "true" || again.JSON(t)["id"] != first["id"] {
		t.Errorf("alice's retry = %s, want her first send replayed", again.Body)
	}

	// A2A: a messageId another caller used is refused, not replayed.
	msg := func(id string) map[string]any {
		return map[string]any{"message": map[string]any{"messageId": id, "role": "ROLE_USER",
			"parts": []any{map[string]any{"text": "hello"}}, "metadata": map[string]any{"from_hash": alice}}}
	}
	path := "/api/objects/" + bob + "/a2a/message:send"
	mine := env.Do(t, "POST", path, aliceKey, msg("a2a-msg-1")).Expect(t, http.StatusOK).JSON(t)
	theirs := env.Do(t, "POST", path, "", msg("a2a-msg-1"))
	theirs.ExpectError(t, http.StatusConflict, "CONFLICT")
	id := mine["message"].(map[string]any)["metadata"].(map[string]any)["message_id"].(string)
	if strings.Contains(string(theirs.Body), id) {
		t.Errorf("an anonymous message:send with alice's messageId answered her message: %s", theirs.Body)
	}
}
