package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestProbes checks /healthz, /readyz and /metrics on the gateway and on every service replica.
func TestProbes(t *testing.T) {
	t.Parallel()
	env := Start(t)
	bases := []string{env.URL}
	for _, urls := range env.Stack.ServiceURLs {
		bases = append(bases, strings.Split(urls, ",")...)
	}
	for _, base := range bases {
		for path, want := range map[string]string{"/healthz": `"ok"`, "/readyz": `"ok"`, "/metrics": "go_goroutines"} {
			resp, err := http.Get(base + path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(body), want) {
				t.Errorf("%s%s: %d %s", base, path, resp.StatusCode, body)
			}
		}
	}
}

// TestInternalRoutesAreNotPublic checks that the services' internal API cannot be reached through
// the gateway, and that a service refuses a request without an internal token.
func TestInternalRoutesAreNotPublic(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, nil)
	env.Do(t, "GET", "/internal/v1/resolve/"+hash, key, nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "POST", "/internal/v1/keys/verify", key, map[string]string{"digest": "x"}).ExpectError(t, 404, "NOT_FOUND")
	for name, urls := range env.Stack.ServiceURLs {
		base := strings.Split(urls, ",")[0]
		resp, err := http.Get(base + "/api/objects/" + hash)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s answered %d to a request without an internal token, want 401", name, resp.StatusCode)
		}
	}
}
