// Package e2e tests svc end to end: each test starts the whole suite in-process on real embedded
// backends (its own databases, topic prefix and Redis) and talks to the gateway over real HTTP.
// Every answer is checked against the gateway's own OpenAPI document.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svcdev/svc/deploy/stack"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
	"go.mongodb.org/mongo-driver/v2/event"
)

// VoucherSecret is the payment voucher secret of every test stack.
const VoucherSecret = "e2e-voucher-secret"

// SigningKeysSecret seals the signing keys identity-svc holds in every test stack.
const SigningKeysSecret = "5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e5e"

// Env is one running suite.
type Env struct {
	URL string
	// GatewayJWTKey and ServiceJWTKey sign internal tokens as the gateway and as a service do, for
	// tests that call a service directly.
	GatewayJWTKey, ServiceJWTKey string
	// Name is unique to the test; the suite's topics are prefixed with Name + ".".
	Name    string
	Brokers []string
	// RedisURL is the Redis the suite shares, for tests that inspect or clear its caches.
	RedisURL string
	Stack    *stack.Stack
	logs     *syncBuffer
	client   *http.Client
	spec     *Spec
}

type options struct {
	env      map[string]string
	replicas map[string]int
	monitor  *event.CommandMonitor
	broker   func(topicPrefix string) []string
}

// Option configures Start.
type Option func(*options)

// WithEnv sets an environment variable of every service (for example a rate limit).
func WithEnv(key, value string) Option { return func(o *options) { o.env[key] = value } }

// WithReplicas runs n instances of a service sharing its database.
func WithReplicas(service string, n int) Option { return func(o *options) { o.replicas[service] = n } }

// WithCommandMonitor lets mon see every store command of every service.
func WithCommandMonitor(mon *event.CommandMonitor) Option {
	return func(o *options) { o.monitor = mon }
}

// WithBroker runs the suite on a broker of the test's own instead of the test binary's shared
// one (a test that stops its broker): start is given the suite's topic prefix, creates the
// topics under it, and returns the broker's addresses.
func WithBroker(start func(topicPrefix string) []string) Option {
	return func(o *options) { o.broker = start }
}

// generous limits keep tests that are not about rate limits from meeting them.
var generous = map[string]string{
	"RATE_OBJECTS_PER_MIN": "100000", "RATE_OBJECTS_BURST": "100000",
	"RATE_MESSAGES_PER_MIN": "100000", "RATE_MESSAGES_BURST": "100000",
	"RATE_RECIPIENT_PER_MIN": "100000", "RATE_RECIPIENT_BURST": "100000",
	"RATE_PUBLIC_PER_MIN": "100000", "RATE_PUBLIC_BURST": "100000",
	"RATE_OWNER_PER_MIN": "100000", "RATE_OWNER_BURST": "100000",
	"RATE_FEED_POLL_INTERVAL": "0",
	"RATE_AUTH_IP_PER_MIN":    "100000", "RATE_AUTH_IP_BURST": "100000",
	// The front door's hold on writes while a projection lags (LAG_LIMIT) is off too: a busy
	// test machine lags, and only the test of that hold turns it on.
	"LAG_LIMIT":              "0",
	"PAYMENT_VOUCHER_SECRET": VoucherSecret,
	"SIGNING_KEYS_SECRET":    SigningKeysSecret,
	"LOG_LEVEL":              "debug",
}

// Start starts a suite for the test and stops it when the test ends.
func Start(t testing.TB, opts ...Option) *Env {
	t.Helper()
	o := options{env: maps.Clone(generous), replicas: map[string]int{}}
	for _, opt := range opts {
		opt(&o)
	}
	be := testkit.Backends(t)
	logs := &syncBuffer{}
	var w io.Writer = logs
	// A fuzz target may not call F's methods, so a fuzz test's suite keeps its logs to itself.
	if _, fuzz := t.(*testing.F); testing.Verbose() && !fuzz {
		w = io.MultiWriter(logs, testWriter{t})
	}
	log := slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	gatewayKey, serviceKey := authn.GenerateSeed(), authn.GenerateSeed()
	if o.broker != nil {
		be.Brokers = o.broker(be.Name + ".")
	}
	s, err := stack.Start(context.Background(), stack.Options{
		MongoURI: be.MongoURI, Brokers: be.Brokers, RedisURL: be.RedisURL,
		DatabasePrefix: be.Name + "_", TopicPrefix: be.Name + ".", GatewayJWTKey: gatewayKey, ServiceJWTKey: serviceKey,
		Env: o.env, Replicas: o.replicas, Log: log, CommandMonitor: guardMonitor(o.monitor),
	})
	if err != nil {
		t.Fatalf("start the suite: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("a service failed: %v", err)
		}
		dropDatabases(be.MongoURI, be.Name+"_")
	})
	e := &Env{URL: s.GatewayURL, GatewayJWTKey: gatewayKey, ServiceJWTKey: serviceKey, Name: be.Name, Brokers: be.Brokers, RedisURL: be.RedisURL, Stack: s, logs: logs,
		client: &http.Client{Timeout: 30 * time.Second}}
	e.spec = loadSpec(t, e)
	return e
}

func dropDatabases(uri, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client, db, err := mongox.Connect(ctx, uri, "admin")
	if err != nil {
		return
	}
	defer client.Disconnect(ctx)
	names, err := db.Client().ListDatabaseNames(ctx, map[string]any{})
	if err != nil {
		return
	}
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			_ = client.Database(n).Drop(ctx)
		}
	}
}

// Logs returns every log line the suite wrote so far.
func (e *Env) Logs() string { return e.logs.String() }

// problems returns the last n warning and error lines the suite logged, to explain a timeout.
func (e *Env) problems(n int) string {
	var out []string
	for line := range strings.Lines(e.logs.String()) {
		if strings.Contains(line, `"level":"WARN"`) || strings.Contains(line, `"level":"ERROR"`) {
			out = append(out, line)
		}
	}
	return strings.Join(out[max(0, len(out)-n):], "")
}

// Response is a gateway answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	method string
	path   string
}

// Request is a request with headers, for Send.
type Request struct {
	Method  string
	Path    string
	Key     string
	Body    any
	Headers map[string]string
}

// Do sends a request to the gateway: body is nil, a string sent as is, or a value sent as JSON.
// key, when not empty, is sent as the bearer API key.
func (e *Env) Do(t testing.TB, method, path, key string, body any) *Response {
	t.Helper()
	return e.Send(t, Request{Method: method, Path: path, Key: key, Body: body})
}

// Send sends a request and checks the answer against the OpenAPI document.
func (e *Env) Send(t testing.TB, r Request) *Response {
	t.Helper()
	resp := e.send(t, r)
	e.spec.Check(t, resp)
	return resp
}

func (e *Env) send(t testing.TB, r Request) *Response {
	t.Helper()
	var body io.Reader
	switch b := r.Body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	case []byte:
		body = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("encode request body: %v", err)
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(r.Method, e.URL+r.Path, body)
	if err != nil {
		t.Fatalf("build request: %v", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.Key != "" {
		req.Header.Set("Authorization", "Bearer "+r.Key)
	}
	for k, v := range r.Headers {
		req.Header.Set(k, v)
	}
	res, err := e.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", r.Method, r.Path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", r.Method, r.Path, err)
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: raw, method: r.Method, path: r.Path}
}

// JSON decodes the body as an object.
func (r *Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.Decode(t, &m)
	return m
}

// Decode decodes the body into v.
func (r *Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("%s %s: body is not the expected JSON (%v): %s", r.method, r.path, err, r.Body)
	}
}

// Expect fails the test unless the status is want.
func (r *Response) Expect(t testing.TB, want int) *Response {
	t.Helper()
	if r.Status != want {
		t.Fatalf("%s %s: status %d, want %d; body: %s", r.method, r.path, r.Status, want, r.Body)
	}
	return r
}

// ErrorCode checks that the body is in the error shape with a request id and returns its code.
func (r *Response) ErrorCode(t testing.TB) string {
	t.Helper()
	var body struct {
		Error *struct {
			Code      string `json:"code"`
			Message   string `json:"message"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	r.Decode(t, &body)
	if body.Error == nil || body.Error.Code == "" || body.Error.Message == "" {
		t.Fatalf("%s %s: status %d body is not in the error shape: %s", r.method, r.path, r.Status, r.Body)
	}
	if body.Error.RequestID == "" || body.Error.RequestID != r.Header.Get("X-Request-Id") {
		t.Fatalf("%s %s: error request_id %q does not match X-Request-Id %q", r.method, r.path, body.Error.RequestID, r.Header.Get("X-Request-Id"))
	}
	return body.Error.Code
}

// ExpectError fails the test unless the answer is status with code in the error shape.
func (r *Response) ExpectError(t testing.TB, status int, code string) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s %s: status %d, want %d (%s); body: %s", r.method, r.path, r.Status, status, code, r.Body)
	}
	if got := r.ErrorCode(t); got != code {
		t.Fatalf("%s %s: error code %q, want %q; body: %s", r.method, r.path, got, code, r.Body)
	}
}

// CreateObject creates an object (body nil means {}) and returns its hash and owner key.
func (e *Env) CreateObject(t testing.TB, body any) (hash, key string) {
	t.Helper()
	if body == nil {
		body = map[string]any{}
	}
	var out struct {
		Hash   string `json:"hash"`
		APIKey string `json:"api_key"`
	}
	e.Do(t, "POST", "/api/objects", "", body).Expect(t, http.StatusCreated).Decode(t, &out)
	return out.Hash, out.APIKey
}

// Eventually polls cond until it holds or 20 seconds pass (for projections fed by events).
func (e *Env) Eventually(t testing.TB, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s\nwarnings and errors the suite logged:\n%s", what, e.problems(40))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Str reads a string field of a decoded object, failing the test when it is missing.
func Str(t testing.TB, m map[string]any, field string) string {
	t.Helper()
	s, ok := m[field].(string)
	if !ok {
		t.Fatalf("field %q is not a string in %v", field, m)
	}
	return s
}

// Num reads a number field of a decoded object.
func Num(t testing.TB, m map[string]any, field string) float64 {
	t.Helper()
	n, ok := m[field].(float64)
	if !ok {
		t.Fatalf("field %q is not a number in %v", field, m)
	}
	return n
}
