package e2e

import (
	"strconv"
	"testing"
)

func TestObjectCreationIsRateLimitedPerIP(t *testing.T) {
	t.Parallel()
	env := Start(t, WithEnv("RATE_OBJECTS_PER_MIN", "3"), WithEnv("RATE_OBJECTS_BURST", "3"))
	for range 3 {
		env.CreateObject(t, nil)
	}
	resp := env.Do(t, "POST", "/api/objects", "", map[string]any{})
	resp.ExpectError(t, 429, "RATE_LIMITED")
	secs, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	if err != nil || secs < 1 || secs > 60 {
		t.Fatalf("Retry-After = %q, want whole seconds within the minute", resp.Header.Get("Retry-After"))
	}
	// Reads are limited separately and still pass.
	env.Do(t, "GET", "/api/directory", "", nil).Expect(t, 200)
}

func TestOwnerRoutesAreRateLimitedPerKey(t *testing.T) {
	t.Parallel()
	env := Start(t, WithEnv("RATE_OWNER_PER_MIN", "2"), WithEnv("RATE_OWNER_BURST", "2"))
	hash, key := env.CreateObject(t, nil)
	other, otherKey := env.CreateObject(t, nil)
	for range 2 {
		env.Do(t, "GET", "/api/objects/"+hash+"/keys", key, nil).Expect(t, 200)
	}
	env.Do(t, "GET", "/api/objects/"+hash+"/keys", key, nil).ExpectError(t, 429, "RATE_LIMITED")
	// Another key has its own budget.
	env.Do(t, "GET", "/api/objects/"+other+"/keys", otherKey, nil).Expect(t, 200)
}

// TestRecipientLimitCoversAliasesAndKeyCase checks that every hash of a recipient shares one
// budget, and that a key spelled with another case ("To_Hash"), which encoding/json would match
// to to_hash, is refused rather than let past the limit.
func TestRecipientLimitCoversAliasesAndKeyCase(t *testing.T) {
	t.Parallel()
	env := Start(t, WithEnv("RATE_RECIPIENT_PER_MIN", "2"), WithEnv("RATE_RECIPIENT_BURST", "2"))
	alice, _ := env.CreateObject(t, nil)
	bob, bobKey := env.CreateObject(t, nil)
	env.Do(t, "POST", "/api/objects/claim-custom-hash", bobKey, map[string]any{"username": "bob_alias", "payment_reference": issueVoucher()}).Expect(t, 200)
	for range 2 {
		sendMessage(t, env, alice, "svc_bob_alias", "", "hi")
	}
	env.Do(t, "POST", "/api/messages", "", map[string]any{"from_hash": alice, "to_hash": bob, "kind": "note", "body": "to the previous hash"}).
		ExpectError(t, 429, "RATE_LIMITED")
	env.Do(t, "POST", "/api/messages", "", map[string]any{"from_hash": alice, "To_Hash": "svc_bob_alias", "kind": "note", "body": "hi"}).
		ExpectError(t, 400, "UNKNOWN_FIELD")
	env.Do(t, "POST", "/api/objects", "", map[string]any{"Visibility": "public"}).ExpectError(t, 400, "UNKNOWN_FIELD")
}
