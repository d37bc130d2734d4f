package app

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/event"

	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/testkit"
)

// storeCommands counts the store commands mailbox-svc sends: those of a request (their context
// carries its request id), by command and collection, and the relay's and consumers' apart.
type storeCommands struct {
	request, background atomic.Int64
	mu                  sync.Mutex
	names               map[string]int
}

func (s *storeCommands) monitor() *event.CommandMonitor {
	return &event.CommandMonitor{Started: func(ctx context.Context, e *event.CommandStartedEvent) {
		if httpx.RequestIDFrom(ctx) == "" {
			s.background.Add(1)
			return
		}
		s.request.Add(1)
		coll := ""
		if el, err := e.Command.IndexErr(0); err == nil {
			coll, _ = el.Value().StringValueOK()
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.names[e.CommandName+" "+coll]++
	}}
}

// report gives the commands counted since req0 and bg0 per operation, and lists them.
func (s *storeCommands) report(b *testing.B, req0, bg0 int64) {
	b.ReportMetric(float64(s.request.Load()-req0)/float64(b.N), "commands/op")
	b.ReportMetric(float64(s.background.Load()-bg0)/float64(b.N), "relay-commands/op")
	s.mu.Lock()
	defer s.mu.Unlock()
	var list []string
	for name, n := range s.names {
		list = append(list, fmt.Sprintf("%s %.1f", name, float64(n)/float64(b.N)))
	}
	sort.Strings(list)
	b.Logf("store commands per send (N=%d): %s", b.N, strings.Join(list, ", "))
	clear(s.names)
}

// BenchmarkSend runs mailbox-svc as deployed (embedded FerretDB, kfake, Redis; identity-svc stood
// in by its internal routes) and sends messages to its API: new threads and replies, one at a
// time. It reports the store commands each send costs (commands/op; the recipient's rules are one
// point read of mailbox-svc's own projection) and those of the outbox relay and the consumers
// meanwhile (relay-commands/op).
func BenchmarkSend(b *testing.B) {
	env := testkit.Backends(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const pairs = 16
	objects := map[string]string{} // hash → object id
	for i := range 2 * pairs {
		objects[fmt.Sprintf("svc_bench%02d", i)] = fmt.Sprintf("obj_bench%02d", i)
	}
	identity := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, ok := objects[strings.TrimPrefix(r.URL.Path, "/internal/v1/resolve/")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"object_id": id, "hash": strings.Replace(id, "obj_", "svc_", 1), "visibility": "public"})
	}))
	defer identity.Close()

	cmds := &storeCommands{names: map[string]int{}}
	var cfg Config
	cfg.URI, cfg.Database, cfg.CommandMonitor = env.MongoURI, env.Name+"_mailbox", cmds.monitor()
	cfg.Brokers, cfg.TopicPrefix, cfg.Redis.URL = env.Brokers, env.Name+".", env.RedisURL
	gateway, err := authn.ParseSigningKey(authn.GenerateSeed())
	if err != nil {
		b.Fatal(err)
	}
	cfg.ServiceKey, cfg.GatewayPublicKey = authn.GenerateSeed(), base64.StdEncoding.EncodeToString(gateway.Public())
	cfg.IdentityURL = identity.URL
	cfg.LogLevel, cfg.ShutdownTimeout = "error", 5*time.Second
	cfg.IdempotencyTTL, cfg.SweepInterval = time.Hour, time.Hour
	cfg.CachedBlockPairs, cfg.CachedAdmissions = 1000, 1000
	a, err := New(ctx, cfg, testkit.Logger(b))
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- a.Serve(ctx, ln) }()
	defer func() { cancel(); <-served }()
	base, client := "http://"+ln.Addr().String(), a.Client(Name)

	n := 0
	send := func(from, to int, thread string) string {
		n++
		msg := map[string]string{"from_hash": fmt.Sprintf("svc_bench%02d", from), "to_hash": fmt.Sprintf("svc_bench%02d", to),
			"kind": "note", "body": "a note of a typical length, about a hundred bytes, sent to the benchmark's recipient"}
		if thread != "" {
			msg["thread_id"] = thread
		}
		raw, _ := json.Marshal(msg)
		req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/messages", bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(httpx.HeaderRequestID, fmt.Sprintf("bench-send-%08d", n))
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusCreated {
			b.Fatalf("send: %d %s", resp.StatusCode, body)
		}
		var m struct {
			ThreadID string `json:"thread_id"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			b.Fatal(err)
		}
		return m.ThreadID
	}
	// A thread per pair, opened before the counts: the first send to an object stores its hash
	// record and fills the caches, as on a service that has been running.
	threads := make([]string, pairs)
	for i := range pairs {
		threads[i] = send(2*i, 2*i+1, "")
	}
	for _, c := range []struct {
		name  string
		reply bool
	}{{"new-thread", false}, {"reply", true}} {
		b.Run(c.name, func(b *testing.B) {
			clear(cmds.names)
			req0, bg0 := cmds.request.Load(), cmds.background.Load()
			i := 0
			for b.Loop() {
				p := i % pairs
				i++
				thread := ""
				if c.reply {
					thread = threads[p]
				}
				send(2*p, 2*p+1, thread)
			}
			cmds.report(b, req0, bg0)
		})
	}
}
