package e2e

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// graphOf reads a thread's graph as key's owner sees it (query: "" or "?as_of=…").
func graphOf(t testing.TB, env *Env, key, threadID, query string) (nodes, edges []map[string]any) {
	t.Helper()
	g := env.Do(t, "GET", "/api/threads/"+threadID+"/graph"+query, key, nil).Expect(t, 200).JSON(t)
	if g["thread_id"] != threadID {
		t.Fatalf("graph of %s answered thread %v", threadID, g["thread_id"])
	}
	for _, n := range g["nodes"].([]any) {
		nodes = append(nodes, n.(map[string]any))
	}
	for _, e := range g["edges"].([]any) {
		edges = append(edges, e.(map[string]any))
	}
	return nodes, edges
}

// ids returns the "id" of each item.
func ids(items []map[string]any) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it["id"].(string))
	}
	return out
}

// byID returns the item with the given id, or nil.
func byID(items []map[string]any, id string) map[string]any {
	for _, it := range items {
		if it["id"] == id {
			return it
		}
	}
	return nil
}

// addNode writes a node and returns its id.
func addNode(t testing.TB, env *Env, key, threadID, typ, body, visibility string) string {
	t.Helper()
	req := map[string]any{"type": typ, "body": body}
	if visibility != "" {
		req["visibility"] = visibility
	}
	n := env.Do(t, "POST", "/api/threads/"+threadID+"/nodes", key, req).Expect(t, http.StatusCreated).JSON(t)
	if n["type"] != typ || n["body"] != body || n["invalid_at"] != nil {
		t.Fatalf("node write answered %v", n)
	}
	return Str(t, n, "id")
}

// thread opens a thread between two new objects: alice's first message and bob's reply.
func thread(t *testing.T, env *Env) (alice, aliceKey, bob, bobKey, threadID string) {
	t.Helper()
	alice, aliceKey = env.CreateObject(t, nil)
	bob, bobKey = env.CreateObject(t, nil)
	threadID = Str(t, sendMessage(t, env, alice, bob, "", "Shall we build the parser first?"), "thread_id")
	return alice, aliceKey, bob, bobKey, threadID
}

// TestGraphOfAThread: messages become message nodes with replies_to edges; both participants
// write nodes and edges; the other side's owner_only nodes are never shown; anyone else gets 404.
func TestGraphOfAThread(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, aliceKey, bob, bobKey, threadID := thread(t, env)
	first := Str(t, sendMessage(t, env, bob, alice, threadID, "Yes, the parser."), "id")
	env.Eventually(t, func() bool {
		nodes, edges := graphOf(t, env, aliceKey, threadID, "")
		return len(nodes) == 2 && len(edges) == 1
	}, "both messages in the graph with a replies_to edge")
	nodes, edges := graphOf(t, env, bobKey, threadID, "")
	if nodes[0]["type"] != "message" || nodes[0]["author_hash"] != alice || nodes[0]["visibility"] != "participants" ||
		nodes[1]["author_hash"] != bob || nodes[1]["message_id"] != first || nodes[0]["message_id"] == nil {
		t.Fatalf("message nodes %v", nodes)
	}
	if e := edges[0]; e["type"] != "replies_to" || e["from_node_id"] != nodes[1]["id"] || e["to_node_id"] != nodes[0]["id"] {
		t.Fatalf("the reply's edge %v, want replies_to from %v to %v", e, nodes[1]["id"], nodes[0]["id"])
	}

	shared := addNode(t, env, aliceKey, threadID, "hypothesis", "A hand-written parser is faster to change.", "")
	secret := addNode(t, env, aliceKey, threadID, "private_goal", "Alice wants to ship before Friday.", "owner_only")
	public := addNode(t, env, bobKey, threadID, "evidence", "The benchmark: 3x faster.", "public")
	edge := env.Do(t, "POST", "/api/threads/"+threadID+"/edges", bobKey,
		map[string]any{"from_node_id": public, "to_node_id": shared, "type": "supports"}).Expect(t, 201).JSON(t)
	if edge["from_node_id"] != public || edge["to_node_id"] != shared || edge["type"] != "supports" || edge["author_hash"] != bob {
		t.Fatalf("edge write answered %v", edge)
	}
	own := env.Do(t, "POST", "/api/threads/"+threadID+"/edges", aliceKey,
		map[string]any{"from_node_id": secret, "to_node_id": shared, "type": "depends_on"}).Expect(t, 201).JSON(t)

	aliceNodes, aliceEdges := graphOf(t, env, aliceKey, threadID, "")
	bobNodes, bobEdges := graphOf(t, env, bobKey, threadID, "")
	if !slices.Contains(ids(aliceNodes), secret) || !slices.Contains(ids(aliceEdges), Str(t, own, "id")) {
		t.Errorf("alice does not see her own owner_only node and its edge: %v %v", ids(aliceNodes), ids(aliceEdges))
	}
	if slices.Contains(ids(bobNodes), secret) || slices.Contains(ids(bobEdges), Str(t, own, "id")) || len(bobNodes) != 4 {
		t.Errorf("bob sees alice's owner_only node or its edge: %v %v", bobNodes, bobEdges)
	}
	if n := byID(bobNodes, public); n == nil || n["visibility"] != "public" || n["author_hash"] != bob {
		t.Errorf("bob's public node %v", n)
	}
	// Bob cannot name alice's owner_only node either: it is not a node of his thread.
	env.Do(t, "POST", "/api/threads/"+threadID+"/edges", bobKey,
		map[string]any{"from_node_id": public, "to_node_id": secret, "type": "contradicts"}).ExpectError(t, 400, "INVALID_REQUEST")

	// Anyone else: 404 on every route, as for a thread that does not exist.
	_, carolKey := env.CreateObject(t, nil)
	for _, id := range []string{threadID, "thr_00000000000000000000000000"} {
		env.Do(t, "GET", "/api/threads/"+id+"/graph", carolKey, nil).ExpectError(t, 404, "NOT_FOUND")
		env.Do(t, "POST", "/api/threads/"+id+"/nodes", carolKey, map[string]any{"type": "question", "body": "?"}).ExpectError(t, 404, "NOT_FOUND")
		env.Do(t, "POST", "/api/threads/"+id+"/edges", carolKey,
			map[string]any{"from_node_id": public, "to_node_id": shared, "type": "supports"}).ExpectError(t, 404, "NOT_FOUND")
		env.Do(t, "POST", "/api/threads/"+id+"/decision", carolKey, map[string]any{"title": "x", "body": "y"}).ExpectError(t, 404, "NOT_FOUND")
		env.Do(t, "PUT", "/api/threads/"+id+"/private-guidance", carolKey, map[string]any{"body": "x"}).ExpectError(t, 404, "NOT_FOUND")
		env.Do(t, "GET", "/api/threads/"+id+"/private-guidance", carolKey, nil).ExpectError(t, 404, "NOT_FOUND")
	}
	env.Do(t, "GET", "/api/threads/"+threadID+"/graph", "", nil).ExpectError(t, 401, "UNAUTHORIZED")

	// A custom hash replaces alice's: her nodes and edges are read under her current hash.
	env.Do(t, "POST", "/api/objects/claim-custom-hash", aliceKey,
		map[string]any{"username": "graph_alice", "payment_reference": issueVoucher()}).Expect(t, 200)
	env.Eventually(t, func() bool {
		nodes, _ := graphOf(t, env, bobKey, threadID, "")
		n := byID(nodes, shared)
		return n != nil && n["author_hash"] == "svc_graph_alice"
	}, "alice's node under her custom hash")

	// /llms.txt tells agents about the graph.
	// (Read directly: the OpenAPI document describes the API, not /llms.txt.)
	res, err := http.Get(env.URL + "/llms.txt")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	llms := string(raw)
	if !containsAll(llms, ". Graph and decisions", "GET "+env.URL+"/api/threads/{threadId}/graph",
		"POST /api/threads/{threadId}/decision [owner, write, mailbox]") {
		t.Errorf("/llms.txt does not describe the graph:\n%s", llms)
	}
}

// TestGraphBadInput: every bad write is a 400 in the error shape and writes nothing.
func TestGraphBadInput(t *testing.T) {
	t.Parallel()
	env := Start(t)
	_, aliceKey, _, _, threadID := thread(t, env)
	node := addNode(t, env, aliceKey, threadID, "question", "Parser first?", "")
	base := "/api/threads/" + threadID
	for _, c := range []struct {
		path string
		body any
		code string
	}{
		{"/nodes", map[string]any{"type": "opinion", "body": "x"}, "INVALID_KIND"},
		{"/nodes", map[string]any{"type": "message", "body": "x"}, "INVALID_KIND"},
		{"/nodes", map[string]any{"type": "decision", "body": "x"}, "INVALID_KIND"},
		{"/nodes", map[string]any{"type": "question", "body": "x", "visibility": "everyone"}, "INVALID_VISIBILITY"},
		{"/nodes", map[string]any{"type": "question", "body": ""}, "INVALID_REQUEST"},
		{"/nodes", map[string]any{"type": "question"}, "MISSING_FIELD"},
		{"/nodes", map[string]any{"type": "question", "body": "x", "colour": "red"}, "UNKNOWN_FIELD"},
		{"/edges", map[string]any{"from_node_id": node, "to_node_id": node, "type": "supports"}, "INVALID_REQUEST"},
		{"/edges", map[string]any{"from_node_id": node, "to_node_id": "nod_missing", "type": "supports"}, "INVALID_REQUEST"},
		{"/edges", map[string]any{"from_node_id": node, "to_node_id": "nod_missing", "type": "likes"}, "INVALID_KIND"},
		{"/edges", map[string]any{"from_node_id": node, "to_node_id": "nod_missing", "type": "supersedes"}, "INVALID_KIND"},
		{"/decision", map[string]any{"title": "t", "body": "b", "confidence": 1.01}, "INVALID_CONFIDENCE"},
		{"/decision", map[string]any{"title": "t", "body": "b", "confidence": -0.01}, "INVALID_CONFIDENCE"},
		{"/decision", map[string]any{"title": "t", "body": "b", "confidence": "high"}, "INVALID_REQUEST"},
		{"/decision", map[string]any{"body": "b"}, "MISSING_FIELD"},
		{"/decision", map[string]any{"title": "t", "body": "b", "supersedes_node_ids": []string{"nod_missing"}}, "INVALID_REQUEST"},
	} {
		r := env.Do(t, "POST", base+c.path, aliceKey, c.body)
		if r.Status != 400 || (r.ErrorCode(t) != c.code && !(c.code == "INVALID_REQUEST" && r.ErrorCode(t) == "INVALID_JSON")) {
			t.Errorf("POST %s %v = %d %s, want 400 %s", c.path, c.body, r.Status, r.Body, c.code)
		}
	}
	env.Do(t, "GET", base+"/graph?as_of=yesterday", aliceKey, nil).ExpectError(t, 400, "INVALID_REQUEST")
	if nodes, edges := graphOf(t, env, aliceKey, threadID, ""); !slices.Contains(ids(nodes), node) || len(edges) > 0 ||
		slices.ContainsFunc(nodes, func(n map[string]any) bool { return n["type"] == "decision" }) {
		t.Errorf("bad writes left something behind: %v %v", nodes, edges)
	}
}

// TestGraphSubKeyScopes: sub-keys need the mailbox scope besides read or write.
func TestGraphSubKeyScopes(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, aliceKey, _, _, threadID := thread(t, env)
	subKey := func(scopes ...string) string {
		return Str(t, env.Do(t, "POST", "/api/objects/"+alice+"/keys", aliceKey, map[string]any{"label": "bot", "scopes": scopes}).
			Expect(t, 201).JSON(t), "key")
	}
	readWrite, mailboxReader, mailboxWriter := subKey("read", "write"), subKey("read", "mailbox"), subKey("write", "mailbox")
	env.Do(t, "GET", "/api/threads/"+threadID+"/graph", readWrite, nil).ExpectError(t, 403, "INSUFFICIENT_SCOPE")
	env.Do(t, "POST", "/api/threads/"+threadID+"/nodes", readWrite, map[string]any{"type": "question", "body": "?"}).ExpectError(t, 403, "INSUFFICIENT_SCOPE")
	env.Do(t, "POST", "/api/threads/"+threadID+"/nodes", mailboxReader, map[string]any{"type": "question", "body": "?"}).ExpectError(t, 403, "INSUFFICIENT_SCOPE")
	env.Do(t, "PUT", "/api/threads/"+threadID+"/private-guidance", readWrite, map[string]any{"body": "x"}).ExpectError(t, 403, "INSUFFICIENT_SCOPE")
	graphOf(t, env, mailboxReader, threadID, "")
	n := env.Do(t, "POST", "/api/threads/"+threadID+"/nodes", mailboxWriter, map[string]any{"type": "question", "body": "?"}).Expect(t, 201).JSON(t)
	if n["author_hash"] != alice {
		t.Errorf("a sub-key's node is authored by %v, want its object %s", n["author_hash"], alice)
	}
}

// TestGraphDecisions: a decision supersedes only the nodes it names, which keep their body and
// gain invalid_at; as_of answers the graph as it stood; both sides' decision memory counts it.
func TestGraphDecisions(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, aliceKey, bob, bobKey, threadID := thread(t, env)
	base := "/api/threads/" + threadID
	h1 := addNode(t, env, aliceKey, threadID, "hypothesis", "Use a generated parser.", "")
	h2 := addNode(t, env, bobKey, threadID, "hypothesis", "Hand-write the parser.", "")
	time.Sleep(20 * time.Millisecond)
	beforeDecision := time.Now().UTC()
	time.Sleep(20 * time.Millisecond)

	conf := 0.8
	d := env.Do(t, "POST", base+"/decision", bobKey, map[string]any{
		"title": "Hand-write the parser", "body": "Faster to change; we own the errors.", "confidence": conf,
		"supersedes_node_ids": []string{h1},
	}).Expect(t, 201).JSON(t)
	decision := Str(t, d, "id")
	if d["type"] != "decision" || d["title"] != "Hand-write the parser" || d["confidence"] != conf ||
		MustJSON(d["supersedes_node_ids"]) != `["`+h1+`"]` || d["author_hash"] != bob || d["created_at"] == nil {
		t.Fatalf("decision answered %v", d)
	}
	// A decision with no confidence, superseding the first decision: history is kept.
	time.Sleep(20 * time.Millisecond)
	beforeSecond := time.Now().UTC()
	time.Sleep(20 * time.Millisecond)
	d2 := Str(t, env.Do(t, "POST", base+"/decision", aliceKey, map[string]any{
		"title": "Hand-write it, in Go", "body": "Same, with Go.", "supersedes_node_ids": []string{decision},
	}).Expect(t, 201).JSON(t), "id")

	for _, key := range []string{aliceKey, bobKey} {
		nodes, edges := graphOf(t, env, key, threadID, "")
		if n := byID(nodes, h1); n == nil || n["invalid_at"] == nil || n["invalidated_by"] != decision || n["body"] != "Use a generated parser." {
			t.Errorf("the superseded node %v, want its body with invalid_at by %s", n, decision)
		}
		if n := byID(nodes, h2); n == nil || n["invalid_at"] != nil {
			t.Errorf("a node the decision did not name was superseded: %v", n)
		}
		if n := byID(nodes, decision); n == nil || n["invalidated_by"] != d2 || n["title"] != "Hand-write the parser" {
			t.Errorf("the first decision %v, want it superseded by %s", n, d2)
		}
		var supersedes []string
		for _, e := range edges {
			if e["type"] == "supersedes" {
				supersedes = append(supersedes, e["from_node_id"].(string)+">"+e["to_node_id"].(string))
			}
		}
		if MustJSON(supersedes) != MustJSON([]string{decision + ">" + h1, d2 + ">" + decision}) {
			t.Errorf("supersedes edges %v", supersedes)
		}
	}

	// As it stood: before the first decision both hypotheses were valid and no decision existed.
	at := func(tm time.Time) string { return "?as_of=" + tm.Format("2006-01-02T15:04:05.000Z") }
	nodes, edges := graphOf(t, env, aliceKey, threadID, at(beforeDecision))
	if byID(nodes, decision) != nil || byID(nodes, h1) == nil || byID(nodes, h1)["invalid_at"] != nil ||
		slices.ContainsFunc(edges, func(e map[string]any) bool { return e["type"] == "supersedes" }) {
		t.Errorf("graph as of before the decision: %v %v", nodes, edges)
	}
	nodes, _ = graphOf(t, env, aliceKey, threadID, at(beforeSecond))
	if byID(nodes, d2) != nil || byID(nodes, decision)["invalid_at"] != nil || byID(nodes, h1)["invalid_at"] == nil {
		t.Errorf("graph as of between the decisions: %v", nodes)
	}
	if nodes, _ := graphOf(t, env, aliceKey, threadID, "?as_of=2000-01-01T00:00:00Z"); len(nodes) != 0 {
		t.Errorf("graph as of 2000: %v", nodes)
	}

	// Only nodes of this thread can be superseded.
	_, otherKey, _, _, otherThread := thread(t, env)
	foreign := addNode(t, env, otherKey, otherThread, "hypothesis", "elsewhere", "")
	env.Do(t, "POST", base+"/decision", aliceKey, map[string]any{"title": "t", "body": "b", "supersedes_node_ids": []string{foreign}}).
		ExpectError(t, 400, "INVALID_REQUEST")

	// Both participants' decision memory lists the second decision as current, naming the first
	// it superseded; the first is marked superseded, never current.
	for _, side := range []struct{ hash, key string }{{alice, aliceKey}, {bob, bobKey}} {
		path := "/api/objects/" + side.hash + "/decision-memory"
		env.Eventually(t, func() bool {
			mem := Str(t, env.Do(t, "GET", path, side.key, nil).Expect(t, 200).JSON(t), "memory")
			return Num(t, env.Do(t, "POST", path, side.key, nil).Expect(t, 200).JSON(t), "rebuilt_from_decisions") == 1 &&
				strings.Contains(mem, "SUPERSEDED")
		}, "both decisions in "+side.hash+"'s decision memory")
		mem := Str(t, env.Do(t, "GET", path, side.key, nil).Expect(t, 200).JSON(t), "memory")
		current, superseded, _ := strings.Cut(mem, "## Superseded decisions")
		if !containsAll(current, "## Hand-write it, in Go", `Supersedes "Hand-write the parser" (node `+decision+`)`, threadID) ||
			strings.Contains(current, "## Hand-write the parser") || !strings.Contains(superseded, `SUPERSEDED: "Hand-write the parser"`) {
			t.Errorf("%s's decision memory:\n%s", side.hash, mem)
		}
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
