package e2e

import (
	"strconv"
	"strings"
	"testing"

	"github.com/svcdev/svc/pkg/apikey"
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
	// svc's own A2A binding names the box inside the message: the same budget applies.
	a2aTo := func(to string) *Response {
		return env.Do(t, "POST", "/a2a/message:send", "", map[string]any{"message": map[string]any{"messageId": "m-" + to,
			"role": "ROLE_USER", "parts": []any{map[string]any{"text": "hi"}}, "metadata": map[string]any{"from_hash": alice, "to_hash": to}}})
	}
	a2aTo(bob).ExpectError(t, 429, "RATE_LIMITED")
	carol, _ := env.CreateObject(t, nil)
	a2aTo(carol).Expect(t, 200)
}

// TestKeysAreRateLimitedPerIPBeforeAuthentication sends well-formed random keys from one IP: the
// per-IP budget refuses them with 429 before identity-svc is asked, and a key found unknown is
// remembered, so repeating it asks identity-svc once.
func TestKeysAreRateLimitedPerIPBeforeAuthentication(t *testing.T) {
	t.Parallel()
	env := Start(t, WithEnv("RATE_AUTH_IP_PER_MIN", "5"), WithEnv("RATE_AUTH_IP_BURST", "5"))
	hash, _ := env.CreateObject(t, nil)
	unknown, _ := apikey.Generate(apikey.OwnerPrefix)
	verifies := func() int { return strings.Count(env.Logs(), `"path":"/internal/v1/keys/verify"`) }
	before := verifies()
	for range 3 {
		env.Do(t, "GET", "/api/objects/"+hash+"/keys", unknown, nil).ExpectError(t, 401, "UNAUTHORIZED")
	}
	if n := verifies() - before; n != 1 {
		t.Errorf("three requests with one unknown key asked identity-svc %d times, want once", n)
	}
	for range 2 {
		random, _ := apikey.Generate(apikey.OwnerPrefix)
		env.Do(t, "GET", "/api/objects/"+hash+"/keys", random, nil).ExpectError(t, 401, "UNAUTHORIZED")
	}
	random, _ := apikey.Generate(apikey.OwnerPrefix)
	env.Do(t, "GET", "/api/objects/"+hash+"/keys", random, nil).ExpectError(t, 429, "RATE_LIMITED")
}

// TestIPv6ClientsShareTheirSlash64 runs behind a trusted proxy: two addresses of one /64 share
// the per-IP budget, an address of another /64 has its own.
func TestIPv6ClientsShareTheirSlash64(t *testing.T) {
	t.Parallel()
	env := Start(t, WithEnv("TRUSTED_PROXIES", "127.0.0.1/32,::1/128"),
		WithEnv("RATE_OBJECTS_PER_MIN", "2"), WithEnv("RATE_OBJECTS_BURST", "2"))
	create := func(ip string) *Response {
		return env.Send(t, Request{Method: "POST", Path: "/api/objects", Headers: map[string]string{"X-Forwarded-For": ip}, Body: map[string]any{}})
	}
	create("2001:db8:1:2::1").Expect(t, 201)
	create("2001:db8:1:2:ffff::9").Expect(t, 201)
	create("2001:db8:1:2::3").ExpectError(t, 429, "RATE_LIMITED")
	create("2001:db8:1:3::1").Expect(t, 201)
}
