package graph_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svcdev/svc/graph-svc/internal/consumers"
	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/outbound"
	"github.com/svcdev/svc/pkg/testkit"
)

// code is the httpx code of err ("" when it carries none).
func code(err error) string {
	var e *apierr.Error
	if errors.As(err, &e) {
		return fmt.Sprint(e.Status, " ", e.Code)
	}
	return ""
}

// TestGraphPages: a thread's graph reads in pages of the limit, newest first, each page's nodes
// oldest first, until a page without a next position; every node appears once.
func TestGraphPages(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	ctx := context.Background()
	const n = 23
	for i := range n {
		if _, err := svc.AddNode(ctx, alice, "thr_ab", graph.NodeDraft{Type: "evidence", Body: fmt.Sprint("node ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	var next string
	var bodies []string
	pages := 0
	for {
		g, err := svc.Graph(ctx, bob, "thr_ab", graph.GraphPage{Before: next, Limit: 10, Cursor: func(key string) string {
			next = key
			return key
		}})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if len(g.Nodes) > 10 {
			t.Fatalf("page %d holds %d nodes, more than its limit", pages, len(g.Nodes))
		}
		var page []string
		for _, v := range g.Nodes {
			page = append(page, v.Body)
		}
		bodies = append(page, bodies...)
		if g.NextCursor == nil {
			break
		}
	}
	if pages != 3 || len(bodies) != n || bodies[0] != "node 0" || bodies[n-1] != fmt.Sprint("node ", n-1) {
		t.Fatalf("%d pages, bodies %v: want 3 pages holding every node once, in order", pages, bodies)
	}
}

// TestPageStopsAtItsBodyBudget: a page of large nodes stops once its bodies passed the page
// budget and carries a next position, however high the limit.
func TestPageStopsAtItsBodyBudget(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	ctx := context.Background()
	big := strings.Repeat("x", graph.MaxBody)
	const n = 20 // 1.25 MiB of bodies
	for range n {
		if _, err := svc.AddNode(ctx, alice, "thr_ab", graph.NodeDraft{Type: "evidence", Body: big}); err != nil {
			t.Fatal(err)
		}
	}
	g, err := svc.Graph(ctx, alice, "thr_ab", graph.GraphPage{Limit: 200, Cursor: func(string) string { return "next" }})
	if err != nil {
		t.Fatal(err)
	}
	if bytes := len(g.Nodes) * graph.MaxBody; bytes > graph.PageBodyBytes+graph.MaxBody || len(g.Nodes) == n || g.NextCursor == nil {
		t.Fatalf("a page of %d nodes (%d bytes of bodies), next %v: want it cut near %d bytes", len(g.Nodes), bytes, g.NextCursor, graph.PageBodyBytes)
	}
}

// TestNodeQuotasHoldUnderConcurrency: 16 concurrent writes of one participant against a quota
// of 5 store exactly 5 nodes; the rest are 409 QUOTA_EXCEEDED, and the other participant still
// writes.
func TestNodeQuotasHoldUnderConcurrency(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	svc.Limits.NodesPerAuthor, svc.Limits.NodesPerThread = 5, 10
	ctx := context.Background()
	var mu sync.Mutex
	stored, refused := 0, 0
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			_, err := svc.AddNode(ctx, bob, "thr_ab", graph.NodeDraft{Type: "question", Body: fmt.Sprint("q", i)})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				stored++
			case code(err) == "409 QUOTA_EXCEEDED":
				refused++
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	g, err := svc.Graph(ctx, bob, "thr_ab", page)
	if err != nil {
		t.Fatal(err)
	}
	if stored != 5 || refused != 11 || len(g.Nodes) != 5 {
		t.Fatalf("%d stored, %d refused, %d in the graph: want 5, 11 and 5", stored, refused, len(g.Nodes))
	}
	if _, err := svc.AddNode(ctx, alice, "thr_ab", graph.NodeDraft{Type: "answer", Body: "a"}); err != nil {
		t.Fatalf("the other participant cannot write once one side used its quota: %v", err)
	}
	if _, err := svc.AddNode(ctx, alice, "thr_ab", graph.NodeDraft{Type: "answer", Body: strings.Repeat("y", graph.MaxBody+1)}); code(err) != "413 PAYLOAD_TOO_LARGE" {
		t.Fatalf("a body over the node size quota: %v, want 413 PAYLOAD_TOO_LARGE", err)
	}
}

// consumed builds a consumed event.
func consumed(t *testing.T, typ, objectID string, data any) events.Event {
	t.Helper()
	return testkit.Consumed(t, events.MustNew(events.TopicMailbox, typ, objectID, "", "req_test", data))
}

// TestBlockCoversTheGraph: once the box owner's sender.blocked is consumed, the blocked sender's
// node, edge and decision writes into their shared thread are 403 SENDER_BLOCKED and no
// decision event reaches anyone; the owner still writes; after sender.unblocked the sender
// writes again.
func TestBlockCoversTheGraph(t *testing.T) {
	t.Parallel()
	svc, ob := newService(t)
	ctx := context.Background()
	h, err := svc.AddNode(ctx, alice, "thr_ab", graph.NodeDraft{Type: "hypothesis", Body: "x"})
	if err != nil {
		t.Fatal(err)
	}
	m := &consumers.Messages{Graph: svc}
	block := contract.SenderBlockData{SenderObjectID: bob.ObjectID, SenderHash: bob.Hash, At: clock.Format(clock.Now())}
	if err := m.Handle(ctx, []events.Event{consumed(t, events.SenderBlocked, alice.ObjectID, block)}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AddNode(ctx, bob, "thr_ab", graph.NodeDraft{Type: "question", Body: "q"}); code(err) != "403 SENDER_BLOCKED" {
		t.Errorf("a blocked sender's node: %v, want 403 SENDER_BLOCKED", err)
	}
	if _, err := svc.AddEdge(ctx, bob, "thr_ab", graph.EdgeDraft{From: h.ID, To: h.ID + "x", Type: "supports"}); code(err) != "403 SENDER_BLOCKED" {
		t.Errorf("a blocked sender's edge: %v, want 403 SENDER_BLOCKED", err)
	}
	if _, err := svc.Decide(ctx, "req_d", bob, "thr_ab", graph.DecisionDraft{Title: "t", Body: "b", Supersedes: []string{h.ID}}); code(err) != "403 SENDER_BLOCKED" {
		t.Errorf("a blocked sender's decision: %v, want 403 SENDER_BLOCKED", err)
	}
	ob.mu.Lock()
	n := len(ob.evs)
	ob.mu.Unlock()
	if n != 0 {
		t.Errorf("%d events after the blocked sender's writes, want none", n)
	}
	if _, err := svc.Decide(ctx, "req_o", alice, "thr_ab", graph.DecisionDraft{Title: "t", Body: "b"}); err != nil {
		t.Errorf("the owner's own decision: %v", err)
	}
	if err := m.Handle(ctx, []events.Event{consumed(t, events.SenderUnblocked, alice.ObjectID, block)}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AddNode(ctx, bob, "thr_ab", graph.NodeDraft{Type: "question", Body: "q"}); err != nil {
		t.Errorf("an unblocked sender's node: %v", err)
	}
}

// down is a mailbox-svc that cannot be reached.
type down struct{}

func (down) Thread(context.Context, string) (*contract.Thread, error) {
	return nil, errors.New("dial tcp 127.0.0.1:1: connection refused")
}

func (down) Blocked(context.Context, string, string) (bool, error) {
	return false, errors.New("dial tcp 127.0.0.1:1: connection refused")
}

// TestGraphAnswersWithoutMailbox: a thread learned from message.created is read, written and
// decided in while mailbox-svc is unreachable, naming authors by the hash identity-svc's
// object.hash_changed made current.
func TestGraphAnswersWithoutMailbox(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	svc.Mailbox = down{}
	ctx := context.Background()
	msg := contract.MessageCreatedData{MessageID: "msg_1", ThreadID: "thr_cd", FromObjectID: "obj_c", FromHash: "svc_c",
		ToObjectID: "obj_d", ToHash: "svc_d", Body: "hello", CreatedAt: clock.Format(clock.Now())}
	if err := (&consumers.Messages{Graph: svc}).Handle(ctx, []events.Event{consumed(t, events.MessageCreated, "obj_d", msg)}); err != nil {
		t.Fatal(err)
	}
	ev := testkit.Consumed(t, events.MustNew(events.TopicIdentity, events.ObjectHashChanged, "obj_c", "svc_custom", "req_h",
		contract.HashChangedData{Hash: "svc_custom", PreviousHash: "svc_c"}))
	if err := (&consumers.Hashes{Graph: svc}).Handle(ctx, ev); err != nil {
		t.Fatal(err)
	}
	d := &contract.Principal{ObjectID: "obj_d", Hash: "svc_d"}
	g, err := svc.Graph(ctx, d, "thr_cd", page)
	if err != nil {
		t.Fatalf("graph read with mailbox-svc down: %v", err)
	}
	if len(g.Nodes) != 1 || g.Nodes[0].AuthorHash != "svc_custom" {
		t.Fatalf("nodes %+v, want the message named by its author's current hash", g.Nodes)
	}
	if _, err := svc.Decide(ctx, "req_x", d, "thr_cd", graph.DecisionDraft{Title: "t", Body: "b"}); err != nil {
		t.Fatalf("decision with mailbox-svc down: %v", err)
	}
}

// TestConcurrentIngestsAreBounded: 16 concurrent ingests of 2 MiB pages against a limiter of 2
// at once and 2 waiting: the excess is refused 503 UNAVAILABLE with a Retry-After before
// anything is written, the rest ingest; the test prints the process's peak RSS.
func TestConcurrentIngestsAreBounded(t *testing.T) {
	t.Parallel()
	svc, _ := newService(t)
	lim, err := outbound.NewLimiter(outbound.LimiterOptions{Max: 2, Queue: 2, Wait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	svc.Limiter = lim
	wide := "<html><head><title>Wide</title></head><body>" + strings.Repeat("<div><p>A wide page of many paragraphs.</p></div>", (2<<20)/50) + "</body></html>"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(wide))
	}))
	t.Cleanup(srv.Close)
	f, err := outbound.New(outbound.Options{AllowPrivate: true, Ports: []int{portOf(t, srv.URL)}, MaxBytes: 3 << 20, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	svc.Fetcher, svc.MaxFetchBytes = f, 3<<20
	var mu sync.Mutex
	ok, busy := 0, 0
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			c := &contract.Principal{ObjectID: fmt.Sprint("obj_ingest_", i), Hash: fmt.Sprint("svc_ingest_", i)}
			_, err := svc.Ingest(context.Background(), "req_i", c, graph.IngestDraft{URLs: []string{srv.URL + "/page"}})
			var e *apierr.Error
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case errors.As(err, &e) && e.Status == 503 && e.RetryAfter > 0:
				busy++
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	t.Logf("16 concurrent ingests of 2 MiB pages: %d ingested, %d refused with Retry-After; %s", ok, busy, rss())
	if ok < 2 || busy == 0 || ok+busy != 16 {
		t.Fatalf("%d ingested and %d refused: want at least the 2 running ingested and the excess refused", ok, busy)
	}
}

// rss reads the process's current and peak resident set from /proc.
func rss() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "RSS unknown"
	}
	var out []string
	for line := range strings.Lines(string(b)) {
		if strings.HasPrefix(line, "VmRSS") || strings.HasPrefix(line, "VmHWM") {
			out = append(out, strings.Join(strings.Fields(line), " "))
		}
	}
	return strings.Join(out, ", ")
}
