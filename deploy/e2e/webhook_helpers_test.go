package e2e

import (
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// received is one POST that reached a receiver.
type received struct {
	Path   string
	Header http.Header
	Body   []byte
	At     time.Time
	// Payload is the decoded body.
	Payload struct {
		Type      string         `json:"type"`
		ID        string         `json:"id"`
		Timestamp string         `json:"timestamp"`
		Data      map[string]any `json:"data"`
	}
}

// receiver is a local HTTPS endpoint that records every delivery; answer decides the status of
// the n-th request (0-based) and may set response headers.
type receiver struct {
	srv    *httptest.Server
	CAFile string
	mu     sync.Mutex
	got    []received
	answer func(n int, w http.ResponseWriter) int
}

func newReceiver(t testing.TB) *receiver {
	t.Helper()
	r := &receiver{}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		rec := received{Path: req.URL.Path, Header: req.Header.Clone(), Body: body, At: time.Now()}
		_ = json.Unmarshal(body, &rec.Payload)
		r.mu.Lock()
		n := len(r.got)
		r.got = append(r.got, rec)
		answer := r.answer
		r.mu.Unlock()
		status := http.StatusNoContent
		if answer != nil {
			status = answer(n, w)
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(r.srv.Close)
	r.CAFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(r.CAFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return r
}

// URL is the receiver's callback URL for path.
func (r *receiver) URL(path string) string { return r.srv.URL + path }

// setAnswer replaces how the receiver answers.
func (r *receiver) setAnswer(f func(n int, w http.ResponseWriter) int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answer = f
}

// Got returns what the receiver got so far.
func (r *receiver) Got() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// waitFor waits until the receiver holds n requests and returns them.
func (r *receiver) waitFor(t testing.TB, env *Env, n int) []received {
	t.Helper()
	env.Eventually(t, func() bool { return len(r.Got()) >= n }, "the receiver to get "+itoa(n)+" deliveries")
	return r.Got()
}

func itoa(n int) string { return strconv.Itoa(n) }

// webhookEnv starts a suite that may deliver to the local receiver (loopback, its private CA),
// with a fast retry schedule and short leases.
func webhookEnv(t testing.TB, rcv *receiver, opts ...Option) *Env {
	t.Helper()
	base := []Option{
		WithEnv("OUTBOUND_ALLOW_PRIVATE", "true"), WithEnv("OUTBOUND_CA_FILE", rcv.CAFile),
		WithEnv("WEBHOOK_RETRY_SCHEDULE", "300ms,300ms,300ms"), WithEnv("WEBHOOK_RETRY_JITTER", "0"),
		WithEnv("WEBHOOK_TIMEOUT", "2s"), WithEnv("WEBHOOK_CLAIM_LEASE", "3s"), WithEnv("WEBHOOK_POLL_INTERVAL", "200ms"),
	}
	env := Start(t, append(base, opts...)...)
	// Every payload the test's receiver gets must match its event's schema in the catalog.
	cat := loadCatalog(t, env)
	t.Cleanup(func() {
		for _, r := range rcv.Got() {
			cat.check(t, "delivery "+r.Header.Get("webhook-id"), r.Body)
		}
	})
	return env
}

// createWebhook creates a webhook and returns its id and secret.
func createWebhook(t testing.TB, env *Env, hash, key string, body map[string]any) (id, secret string) {
	t.Helper()
	m := env.Do(t, "POST", "/api/objects/"+hash+"/webhooks", key, body).Expect(t, http.StatusCreated).JSON(t)
	return Str(t, m, "id"), Str(t, m, "secret")
}

// verify checks a delivery's Standard Webhooks signature with secret.
func verify(t testing.TB, secret string, r received) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(r.Body, r.Header); err != nil {
		t.Fatalf("signature of delivery %s does not verify: %v (webhook-signature %q)", r.Header.Get("webhook-id"), err, r.Header.Get("webhook-signature"))
	}
}

// webhookStatus reads a webhook with its health and deliveries.
func webhookStatus(t testing.TB, env *Env, hash, key, id string) map[string]any {
	t.Helper()
	return env.Do(t, "GET", "/api/objects/"+hash+"/webhooks/"+id, key, nil).Expect(t, 200).JSON(t)
}

// deliveriesOf returns the deliveries of a webhook status, newest first.
func deliveriesOf(t testing.TB, st map[string]any) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, d := range st["deliveries"].([]any) {
		out = append(out, d.(map[string]any))
	}
	return out
}

// attemptCodes lists the status codes of a delivery's attempts (0 for none).
func attemptCodes(d map[string]any) []int {
	var out []int
	for _, a := range d["attempts"].([]any) {
		code, _ := a.(map[string]any)["status_code"].(float64)
		out = append(out, int(code))
	}
	return out
}
