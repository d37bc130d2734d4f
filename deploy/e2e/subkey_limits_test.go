package e2e

import (
	"fmt"
	"net/http"
	"testing"
)

// TestSubKeysDoNotMultiplyLimits: an object holds at most 50 active sub-keys (a revoked one frees
// its place); the owner rate limit and the stream cap hold per object, whichever of its keys calls;
// and keyed streams from one client address are capped whatever objects' keys open them.
func TestSubKeysDoNotMultiplyLimits(t *testing.T) {
	t.Parallel()
	env := Start(t, WithEnv("RATE_OWNER_PER_MIN", "1000"), WithEnv("RATE_OWNER_BURST", "1000"),
		WithEnv("RATE_STREAMS_PER_KEY", "2"), WithEnv("RATE_STREAMS_PER_IP", "3"))
	hash, key := env.CreateObject(t, nil)
	var subs []map[string]any
	for i := range 50 {
		subs = append(subs, env.Do(t, "POST", "/api/objects/"+hash+"/keys", key,
			map[string]any{"label": fmt.Sprint("bot ", i), "scopes": []string{"read"}}).Expect(t, http.StatusCreated).JSON(t))
	}
	env.Do(t, "POST", "/api/objects/"+hash+"/keys", key, map[string]any{"label": "one too many"}).ExpectError(t, http.StatusConflict, "QUOTA_EXCEEDED")
	env.Do(t, "DELETE", "/api/objects/"+hash+"/keys/"+Str(t, subs[0], "id"), key, nil).Expect(t, http.StatusOK)
	again := env.Do(t, "POST", "/api/objects/"+hash+"/keys", key, map[string]any{"label": "in its place", "scopes": []string{"read"}}).
		Expect(t, http.StatusCreated).JSON(t)

	// Streams: two open with two different sub-keys fill the object's cap.
	url := env.URL + "/api/objects/" + hash + "/events"
	subscribe(t, sseClient(url, Str(t, subs[1], "key")))
	subscribe(t, sseClient(url, Str(t, again, "key")))
	env.Do(t, "GET", "/api/objects/"+hash+"/events?after=x&wait=1s", Str(t, subs[2], "key"), nil).ExpectError(t, http.StatusTooManyRequests, "RATE_LIMITED")
	// Another object's key from the same address: one more fits the address's cap of three, then not.
	other, otherKey := env.CreateObject(t, nil)
	subscribe(t, sseClient(env.URL+"/api/objects/"+other+"/events", otherKey))
	third, thirdKey := env.CreateObject(t, nil)
	env.Do(t, "GET", "/api/objects/"+third+"/events?after=x&wait=1s", thirdKey, nil).ExpectError(t, http.StatusTooManyRequests, "RATE_LIMITED")
}

// TestOwnerLimitIsPerObject: once an object's keys used its owner burst, every key of it is
// refused, a new sub-key too.
func TestOwnerLimitIsPerObject(t *testing.T) {
	t.Parallel()
	env := Start(t, WithEnv("RATE_OWNER_PER_MIN", "8"), WithEnv("RATE_OWNER_BURST", "8"))
	hash, key := env.CreateObject(t, nil)
	sub := env.Do(t, "POST", "/api/objects/"+hash+"/keys", key, map[string]any{"label": "bot"}).Expect(t, http.StatusCreated).JSON(t)
	limited := false
	for range 12 {
		if env.Do(t, "GET", "/api/whoami", Str(t, sub, "key"), nil).Status == http.StatusTooManyRequests {
			limited = true
			break
		}
	}
	if !limited {
		t.Fatal("twelve calls of one sub-key with a burst of eight were all served")
	}
	env.Do(t, "GET", "/api/whoami", key, nil).ExpectError(t, http.StatusTooManyRequests, "RATE_LIMITED")
}
