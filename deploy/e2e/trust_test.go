package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/svcdev/svc/pkg/apikey"
)

// TestRateLimitBadKeysDoNotLockOutTheOwner: 700 well-formed unknown keys from one address are
// slowed and refused (429 once the per-IP budget is spent, without asking identity-svc), and
// then the owner's valid key from the same address works: it is answered from a cache, which
// never spends the budget. The budget is small (60 a minute, 100 at once) so that one
// sequential client spends it whatever the machine's speed; the production default is larger.
func TestRateLimitBadKeysDoNotLockOutTheOwner(t *testing.T) {
	t.Parallel()
	env := Start(t, WithEnv("RATE_AUTH_IP_PER_MIN", "60"), WithEnv("RATE_AUTH_IP_BURST", "100"))
	hash, key := env.CreateObject(t, nil)
	verifies := func() int { return strings.Count(env.Logs(), `"path":"/internal/v1/keys/verify"`) }
	before := verifies()
	refused := 0
	for range 700 {
		unknown, _ := apikey.Generate(apikey.OwnerPrefix)
		r := env.Do(t, "POST", "/api/objects/"+hash+"/rotate-key", unknown, nil)
		switch r.Status {
		case 429:
			refused++
		case 401:
		default:
			t.Fatalf("an unknown key answered %d %s", r.Status, r.Body)
		}
	}
	lookups := verifies() - before
	t.Logf("700 unknown keys: %d refused with 429, %d lookups at identity-svc", refused, lookups)
	if refused < 400 || lookups > 250 {
		t.Errorf("700 unknown keys from one address: %d refused, %d looked up; want most refused and at most the budget looked up", refused, lookups)
	}
	r := env.Do(t, "POST", "/api/objects/"+hash+"/rotate-key", key, nil).Expect(t, 200).JSON(t)
	next := Str(t, r, "api_key")
	env.Do(t, "GET", "/api/objects/"+hash+"/keys", next, nil).Expect(t, 200)
	// The rotated-away key is refused as any bad key: 401 while the budget lasts, else 429.
	if s := env.Do(t, "GET", "/api/objects/"+hash+"/keys", key, nil).Status; s != 401 && s != 429 {
		t.Errorf("the rotated-away key answered %d", s)
	}
}

// TestTokenRevocationReachesEveryReplica runs two gateway replicas: a key in use on both (so
// cached in each one's memory) is refused by both from its rotation's or revocation's answer
// on: the first request after the answer, on each replica, is 401, whether or not the
// announcement reached the replica yet (identity-svc counts the revocation in Redis before it
// answers, and each request reads the count).
func TestTokenRevocationReachesEveryReplica(t *testing.T) {
	t.Parallel()
	env := Start(t, WithReplicas("gateway", 2))
	gateways := env.Stack.GatewayURLs
	if len(gateways) != 2 {
		t.Fatalf("gateway replicas: %v", gateways)
	}
	hash, key := env.CreateObject(t, nil)
	keys := "/api/objects/" + hash + "/keys"
	client := &http.Client{Timeout: 10 * time.Second}
	status := func(gw, method, path, key string) int {
		req, err := http.NewRequest(method, gw+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		return res.StatusCode
	}
	// warm uses key on every replica, so that each holds it in its in-process cache.
	warm := func(key string) {
		for _, gw := range gateways {
			if s := status(gw, "GET", keys, key); s == 401 {
				t.Fatalf("a live key is refused by %s", gw)
			}
		}
	}
	// refused checks that every replica refuses key at once.
	refused := func(what, key string) {
		for _, gw := range gateways {
			if s := status(gw, "GET", keys, key); s != 401 {
				t.Fatalf("%s: the first request after the answer got %d from %s, want 401", what, s, gw)
			}
		}
	}
	for range 20 {
		warm(key)
		r := env.Do(t, "POST", "/api/objects/"+hash+"/rotate-key", key, nil).Expect(t, 200).JSON(t)
		old := key
		key = Str(t, r, "api_key")
		refused("rotation", old)

		sub := env.Do(t, "POST", keys, key, map[string]any{"scopes": []string{"read"}}).Expect(t, 201).JSON(t)
		subKey, subID := Str(t, sub, "key"), Str(t, sub, "id")
		warm(subKey)
		env.Do(t, "DELETE", keys+"/"+subID, key, nil).Expect(t, 200)
		refused("sub-key revocation", subKey)
	}
}

// TestTrustBoxPageLoadsNoRemoteImages: the box page's policy lets a browser load images only from
// svc itself or data: URLs, so a tracking pixel in a profile sees no visitor.
func TestTrustBoxPageLoadsNoRemoteImages(t *testing.T) {
	t.Parallel()
	env := Start(t)
	box, _ := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Pixel\n\n![](https://tracker.example/p.gif)\n"})
	page := env.Do(t, "GET", "/"+box, "", nil).Expect(t, http.StatusOK)
	var img string
	for _, d := range strings.Split(page.Header.Get("Content-Security-Policy"), ";") {
		if f := strings.Fields(d); len(f) > 0 && f[0] == "img-src" {
			img = strings.Join(f[1:], " ")
		}
	}
	if img != "'self' data:" {
		t.Errorf("img-src = %q, want 'self' data:", img)
	}
}

// TestTrustBidiControlsStayOutOfDisplayText: a profile title written with a right-to-left
// override is shown without it (agent card name, box page title; the profile's own markdown is
// content and is kept as written), and a feed item carrying one is refused.
func TestTrustBidiControlsStayOutOfDisplayText(t *testing.T) {
	t.Parallel()
	env := Start(t)
	box, key := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Invoice \u202Egpj.exe\u2066x\u2069\n\nhello\n"})
	card := env.Do(t, "GET", "/api/objects/"+box+"/agent-card.json", "", nil).Expect(t, 200)
	page := env.Do(t, "GET", "/"+box, "", nil).Expect(t, 200)
	title, _, _ := strings.Cut(string(page.Body), "</title>")
	_, title, _ = strings.Cut(title, "<title>")
	for what, body := range map[string][]byte{"agent card": card.Body, "box page title": []byte(title)} {
		if strings.ContainsAny(string(body), "\u202E\u2066\u2069") || strings.Contains(string(body), `\u202e`) {
			t.Errorf("the %s shows a bidi control", what)
		}
		if !strings.Contains(string(body), "Invoice gpj.exex") {
			t.Errorf("the %s lacks the title without its controls: %s", what, body)
		}
	}
	enableFeed(t, env, box, key)
	for _, item := range []map[string]any{
		{"title": "fine \u202Etxt.exe", "body": "b", "tags": []string{}},
		{"title": "fine", "body": "isolate \u2067here", "tags": []string{}},
	} {
		env.Do(t, "POST", "/api/feeds/"+box+"/items", key, item).ExpectError(t, 400, "INVALID_REQUEST")
	}
}

// TestTrustSyncConfigRefusesWhatAPullWould: PUT sync refuses a loopback, private, metadata or
// localhost repo_url with 400 INVALID_URL, as POST sync would when pulling it.
func TestTrustSyncConfigRefusesWhatAPullWould(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, nil)
	for _, u := range []string{
		"https://127.0.0.1/r.git", "https://[::1]:8443/r.git", "https://169.254.169.254/latest/meta-data",
		"https://10.1.2.3/r.git", "https://localhost/r.git",
	} {
		env.Do(t, "PUT", "/api/objects/"+hash+"/sync", key, map[string]any{"repo_url": u}).ExpectError(t, 400, "INVALID_URL")
	}
	env.Do(t, "POST", "/api/objects/"+hash+"/sync", key, nil).ExpectError(t, 409, "CONFLICT")
}
