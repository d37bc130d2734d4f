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
