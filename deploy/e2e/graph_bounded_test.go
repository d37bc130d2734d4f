package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// graphPage reads one page of a thread's graph.
func graphPage(t testing.TB, env *Env, key, threadID, query string) map[string]any {
	t.Helper()
	return env.Do(t, "GET", "/api/threads/"+threadID+"/graph"+query, key, nil).Expect(t, 200).JSON(t)
}

// TestGraphPages: a thread's graph reads in pages of the limit through the gateway, following
// next_cursor until null, every node once; a forged or foreign cursor and a limit past the
// maximum are 400.
func TestGraphPages(t *testing.T) {
	t.Parallel()
	env := Start(t)
	_, aliceKey, _, bobKey, threadID := thread(t, env)
	env.Eventually(t, func() bool { n, _ := graphOf(t, env, aliceKey, threadID, ""); return len(n) == 1 }, "the first message in the graph")
	const written = 7
	for i := range written {
		addNode(t, env, aliceKey, threadID, "evidence", fmt.Sprint("evidence ", i), "")
	}
	seen := map[string]bool{}
	query, pages := "?limit=3", 0
	for {
		g := graphPage(t, env, bobKey, threadID, query)
		pages++
		nodes := g["nodes"].([]any)
		if len(nodes) > 3 {
			t.Fatalf("page %d holds %d nodes, past its limit of 3", pages, len(nodes))
		}
		for _, n := range nodes {
			id := n.(map[string]any)["id"].(string)
			if seen[id] {
				t.Fatalf("node %s on two pages", id)
			}
			seen[id] = true
		}
		if g["next_cursor"] == nil {
			break
		}
		query = "?limit=3&cursor=" + g["next_cursor"].(string)
	}
	if pages != 3 || len(seen) != written+1 {
		t.Fatalf("%d pages holding %d nodes, want 3 pages and %d nodes", pages, len(seen), written+1)
	}
	first := graphPage(t, env, aliceKey, threadID, "?limit=2")
	cur := first["next_cursor"].(string)
	_, otherKey, _, _, other := thread(t, env)
	env.Do(t, "GET", "/api/threads/"+other+"/graph?cursor="+cur, otherKey, nil).ExpectError(t, 400, "INVALID_REQUEST")
	env.Do(t, "GET", "/api/threads/"+threadID+"/graph?cursor=x"+cur, aliceKey, nil).ExpectError(t, 400, "INVALID_REQUEST")
	env.Do(t, "GET", "/api/threads/"+threadID+"/graph?limit=201", aliceKey, nil).ExpectError(t, 400, "INVALID_REQUEST")
}

// TestGraphQuotas: concurrent node writes of one participant never pass its quota (the excess
// is 409 QUOTA_EXCEEDED); the other participant still writes; a body past the node size quota
// is 413; an ingest past the source quota is 409 before anything is fetched.
func TestGraphQuotas(t *testing.T) {
	t.Parallel()
	p := startPages(t)
	env := ingestEnv(t, p, WithEnv("GRAPH_MAX_NODES_PER_AUTHOR", "3"), WithEnv("GRAPH_MAX_NODES_PER_THREAD", "6"),
		WithEnv("GRAPH_MAX_NODE_BYTES", "1024"), WithEnv("GRAPH_MAX_SOURCES_PER_OWNER", "2"))
	_, aliceKey, _, bobKey, threadID := thread(t, env)
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			r := env.Do(t, "POST", "/api/threads/"+threadID+"/nodes", bobKey, map[string]any{"type": "question", "body": fmt.Sprint("q", i)})
			if r.Status == 409 && r.ErrorCode(t) != "QUOTA_EXCEEDED" {
				t.Errorf("409 with code %s", r.ErrorCode(t))
			}
			mu.Lock()
			codes[r.Status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[201] != 3 || codes[409] != 5 {
		t.Fatalf("8 concurrent writes against a quota of 3 answered %v, want 3 × 201 and 5 × 409", codes)
	}
	addNode(t, env, aliceKey, threadID, "answer", "the other side still writes", "")
	env.Do(t, "POST", "/api/threads/"+threadID+"/nodes", aliceKey, map[string]any{"type": "answer", "body": strings.Repeat("x", 1025)}).
		ExpectError(t, 413, "PAYLOAD_TOO_LARGE")

	_, key := env.CreateObject(t, nil)
	p.set("/a", articlePage)
	env.Do(t, "POST", "/api/ingest", key, map[string]any{"urls": []string{p.URL + "/a", p.URL + "/b", p.URL + "/c"}}).
		ExpectError(t, 409, "QUOTA_EXCEEDED")
	if hits := p.hits.Load(); hits != 0 {
		t.Errorf("an ingest refused by its quota fetched %d pages", hits)
	}
	env.Do(t, "POST", "/api/ingest", key, map[string]any{"urls": []string{p.URL + "/a", p.URL + "/b"}}).Expect(t, 201)
	env.Do(t, "POST", "/api/ingest", key, map[string]any{"urls": []string{p.URL + "/a"}}).ExpectError(t, 409, "QUOTA_EXCEEDED")
	first := env.Do(t, "GET", "/api/ingest?limit=1", key, nil).Expect(t, 200).JSON(t)
	if len(first["sources"].([]any)) != 1 || first["next_cursor"] == nil {
		t.Fatalf("the overview's first page of sources: %v", first)
	}
	rest := env.Do(t, "GET", "/api/ingest?limit=1&cursor="+first["next_cursor"].(string), key, nil).Expect(t, 200).JSON(t)
	if len(rest["sources"].([]any)) != 1 || rest["next_cursor"] != nil {
		t.Fatalf("the overview's second page of sources: %v", rest)
	}
}

// TestBlockCoversTheGraph: once the box owner blocked a sender, the sender's node and decision
// writes into their shared thread are 403 SENDER_BLOCKED, and neither the owner's decision
// webhook nor its rebuilt decision memory sees anything of them; the owner's own decision
// reaches both.
func TestBlockCoversTheGraph(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	env := webhookEnv(t, rcv)
	sender, senderKey, owner, ownerKey, threadID := thread(t, env)
	createWebhook(t, env, owner, ownerKey, map[string]any{"callback_url": rcv.URL("/decisions"), "events": []string{"decision"}})
	env.Do(t, "POST", "/api/objects/"+owner+"/sender-blocks", ownerKey, map[string]any{"blocked_hash": sender}).Expect(t, 201)
	base := "/api/threads/" + threadID
	env.Eventually(t, func() bool {
		return env.Do(t, "POST", base+"/nodes", senderKey, map[string]any{"type": "question", "body": "still here?"}).Status == 403
	}, "the block to reach the graph")
	env.Do(t, "POST", base+"/nodes", senderKey, map[string]any{"type": "question", "body": "q"}).ExpectError(t, 403, "SENDER_BLOCKED")
	env.Do(t, "POST", base+"/decision", senderKey, map[string]any{"title": "BLOCKED-DECISION", "body": "b"}).
		ExpectError(t, 403, "SENDER_BLOCKED")
	env.Do(t, "POST", base+"/decision", ownerKey, map[string]any{"title": "OWNER-DECISION", "body": "b"}).Expect(t, 201)
	got := rcv.waitFor(t, env, 1)
	for _, r := range got {
		if strings.Contains(string(r.Body), "BLOCKED-DECISION") {
			t.Errorf("the owner's webhook received the blocked sender's decision: %s", r.Body)
		}
	}
	if !strings.Contains(string(got[0].Body), "OWNER-DECISION") {
		t.Errorf("the owner's decision webhook: %s", got[0].Body)
	}
	path := "/api/objects/" + owner + "/decision-memory"
	env.Eventually(t, func() bool {
		return Num(t, env.Do(t, "POST", path, ownerKey, nil).Expect(t, 200).JSON(t), "rebuilt_from_decisions") == 1
	}, "the owner's decision in its memory")
	if mem := Str(t, env.Do(t, "GET", path, ownerKey, nil).Expect(t, 200).JSON(t), "memory"); strings.Contains(mem, "BLOCKED-DECISION") ||
		!strings.Contains(mem, "OWNER-DECISION") {
		t.Errorf("the owner's decision memory:\n%s", mem)
	}
}

// TestGraphAnswersWithMailboxDown: with mailbox-svc stopped, the graph of an existing thread is
// read, written and decided in: graph-svc answers from its own projections.
func TestGraphAnswersWithMailboxDown(t *testing.T) {
	t.Parallel()
	env := Start(t)
	_, aliceKey, _, bobKey, threadID := thread(t, env)
	env.Eventually(t, func() bool { n, _ := graphOf(t, env, aliceKey, threadID, ""); return len(n) == 1 }, "the first message in the graph")
	if err := env.Stack.StopReplica("mailbox-svc", 0); err != nil {
		t.Fatal(err)
	}
	node := addNode(t, env, bobKey, threadID, "hypothesis", "written while the mailbox is down", "")
	env.Do(t, "POST", "/api/threads/"+threadID+"/decision", aliceKey, map[string]any{"title": "t", "body": "b",
		"supersedes_node_ids": []string{node}}).Expect(t, http.StatusCreated)
	nodes, edges := graphOf(t, env, bobKey, threadID, "")
	if len(nodes) != 3 || len(edges) != 1 || byID(nodes, node)["invalid_at"] == nil {
		t.Fatalf("graph with mailbox-svc down: %v %v", nodes, edges)
	}
}

// TestConcurrentIngestsAreBoundedThroughTheGateway: 16 concurrent ingests of 2 MiB pages against
// a graph-svc that reads 2 at once with 2 waiting: the excess is 503 UNAVAILABLE with a
// Retry-After, and what was refused wrote nothing (its caller has no self-ingest thread).
func TestConcurrentIngestsAreBoundedThroughTheGateway(t *testing.T) {
	t.Parallel()
	p := startPages(t)
	env := ingestEnv(t, p, WithEnv("OUTBOUND_MAX_CONCURRENT", "2"), WithEnv("OUTBOUND_MAX_QUEUED", "2"),
		WithEnv("OUTBOUND_QUEUE_WAIT", "100ms"))
	p.set("/wide", "<html><head><title>Wide</title></head><body>"+
		strings.Repeat("<div><p>A wide page of many paragraphs.</p></div>", (2<<20)/50)+"</body></html>")
	keys := make([]string, 16)
	for i := range keys {
		_, keys[i] = env.CreateObject(t, nil)
	}
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for _, key := range keys {
		wg.Go(func() {
			r := env.Do(t, "POST", "/api/ingest", key, map[string]any{"urls": []string{p.URL + "/wide"}})
			if r.Status == 503 && (r.Header.Get("Retry-After") == "" || r.ErrorCode(t) != "UNAVAILABLE") {
				t.Errorf("a refused ingest lacks Retry-After or UNAVAILABLE: %v", r.Header)
			}
			if r.Status == 503 {
				if o := env.Do(t, "GET", "/api/ingest", key, nil).Expect(t, 200).JSON(t); o["self_thread"] != nil {
					t.Errorf("a refused ingest wrote its self-ingest thread: %v", o["self_thread"])
				}
			}
			mu.Lock()
			codes[r.Status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	t.Logf("16 concurrent ingests of 2 MiB pages: %v", codes)
	if codes[201] < 2 || codes[503] == 0 || codes[201]+codes[503] != 16 {
		t.Fatalf("answers %v: want the ingests that got a turn 201 and the excess 503", codes)
	}
}
