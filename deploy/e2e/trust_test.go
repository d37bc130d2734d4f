package e2e

import (
	"fmt"
	"net/http"
	"slices"
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
// cached in each one's memory) is refused by both soon after its rotation or revocation
// answers. The target is 100 ms; the assertion is a generous bound on the p99 of 20
// trials each, which the figures printed show.
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
	// refusedWithin measures, from now, how long until every replica refuses key.
	refusedWithin := func(key string) time.Duration {
		start := time.Now()
		pending := slices.Clone(gateways)
		for len(pending) > 0 {
			if time.Since(start) > 5*time.Second {
				t.Fatalf("a revoked key is still accepted by %v after 5 s", pending)
			}
			pending = slices.DeleteFunc(pending, func(gw string) bool { return status(gw, "GET", keys, key) == 401 })
		}
		return time.Since(start)
	}

	const trials = 20
	var rotations, revocations []time.Duration
	for range trials {
		warm(key)
		r := env.Do(t, "POST", "/api/objects/"+hash+"/rotate-key", key, nil).Expect(t, 200).JSON(t)
		old := key
		key = Str(t, r, "api_key")
		rotations = append(rotations, refusedWithin(old))

		sub := env.Do(t, "POST", keys, key, map[string]any{"scopes": []string{"read"}}).Expect(t, 201).JSON(t)
		subKey, subID := Str(t, sub, "key"), Str(t, sub, "id")
		warm(subKey)
		env.Do(t, "DELETE", keys+"/"+subID, key, nil).Expect(t, 200)
		revocations = append(revocations, refusedWithin(subKey))
	}
	const bound = 300 * time.Millisecond
	for name, ds := range map[string][]time.Duration{"rotation": rotations, "sub-key revocation": revocations} {
		p50, p99 := percentile(ds, 50), percentile(ds, 99)
		fmt.Printf("%s refused by both of 2 gateway replicas: p50 %v, p99 %v over %d trials (target 100ms)\n", name, p50, p99, len(ds))
		if p99 > bound {
			t.Errorf("%s: p99 %v over %d trials, want under %v", name, p99, len(ds), bound)
		}
	}
}

// percentile is the p-th percentile of ds (nearest rank).
func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (p*len(s)+99)/100 - 1
	return s[max(0, min(i, len(s)-1))]
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
