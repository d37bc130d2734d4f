package e2e

import (
	"io"
	"net/http"
	"regexp"
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
// the gateway, and that a service refuses a request without an internal token: every documented
// operation sent straight to a service is refused (401) by the service that serves it and
// unknown (404, 405) to the others.
func TestInternalRoutesAreNotPublic(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, nil)
	env.Do(t, "GET", "/internal/v1/resolve/"+hash, key, nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "POST", "/internal/v1/keys/verify", key, map[string]string{"digest": "x"}).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "GET", "/internal/v1/objects/x/rules", key, nil).ExpectError(t, 404, "NOT_FOUND")
	param := regexp.MustCompile(`\{[A-Za-z_]+\}`)
	for name, urls := range env.Stack.ServiceURLs {
		base := strings.Split(urls, ",")[0]
		refused := 0
		for tpl, ops := range env.spec.Doc["paths"].(map[string]any) {
			path := strings.ReplaceAll(tpl, "{hash}", hash)
			path = param.ReplaceAllString(path, "x")
			for method := range ops.(map[string]any) {
				req, _ := http.NewRequest(strings.ToUpper(method), base+path, nil)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusUnauthorized:
					refused++
				case http.StatusNotFound, http.StatusMethodNotAllowed:
				default:
					t.Errorf("%s answered %s %s without an internal token with %d", name, method, tpl, resp.StatusCode)
				}
			}
		}
		if refused == 0 {
			t.Errorf("%s refused none of the documented operations for want of an internal token", name)
		}
	}
}
