package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds an API key to every request of an MCP client.
type bearer struct {
	key  string
	base http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.key != "" {
		r.Header.Set("Authorization", "Bearer "+b.key)
	}
	return b.base.RoundTrip(r)
}

// mcpSession connects the official Go SDK client to the suite's /mcp with key ("" for none).
func mcpSession(t testing.TB, env *Env, key string) *mcp.ClientSession {
	t.Helper()
	return mcpSessionAt(t, env, key, "")
}

// mcpSessionAt connects asking for the protocol revision version ("": the SDK's latest).
func mcpSessionAt(t testing.TB, env *Env, key, version string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "svc-e2e", Version: "1.0.0"}, nil)
	transport := &mcp.StreamableClientTransport{Endpoint: env.URL + "/mcp", MaxRetries: -1,
		HTTPClient: &http.Client{Timeout: 30 * time.Second, Transport: bearer{key: key, base: http.DefaultTransport}}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect to /mcp: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// callTool calls a tool and returns its result.
func callTool(t testing.TB, s *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

// toolOK calls a tool that must succeed and returns its structured content.
func toolOK(t testing.TB, s *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	res := callTool(t, s, name, args)
	if res.IsError {
		t.Fatalf("tools/call %s %v failed: %s", name, args, toolText(res))
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("tools/call %s: structured content %s is not an object", name, raw)
	}
	if text := toolText(res); text == "" {
		t.Fatalf("tools/call %s: no text content beside the structured content", name)
	}
	return out
}

// toolRefusal calls a tool that must be refused and returns the HTTP status and the API error
// code its result carries.
func toolRefusal(t testing.TB, s *mcp.ClientSession, name string, args map[string]any) (int, string) {
	t.Helper()
	res := callTool(t, s, name, args)
	if !res.IsError {
		t.Fatalf("tools/call %s succeeded, want a refusal: %s", name, toolText(res))
	}
	var body struct {
		Status int `json:"status"`
		Error  struct {
			Code, Message string
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(toolText(res)), &body); err != nil || body.Error.Code == "" || body.Error.Message == "" {
		t.Fatalf("tools/call %s: the refusal is not in the error shape: %s", name, toolText(res))
	}
	return body.Status, body.Error.Code
}

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func toolNames(t testing.TB, s *mcp.ClientSession) []string {
	t.Helper()
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// TestMCPAgentLoop runs an agent's loop through /mcp with the official Go SDK client: who am I,
// send, read the thread, record a decision, set guidance, rebuild and read decision memory; and
// checks that a tool's answer is the REST answer of its route.
func TestMCPAgentLoop(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, aliceKey := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Alice\n\nBuilds parsers."})
	bob, bobKey := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Bob\n\nShips compilers."})
	s := mcpSession(t, env, aliceKey)
	if got := s.InitializeResult(); got == nil || !strings.Contains(got.Instructions, "never quote") ||
		!strings.Contains(got.Instructions, "never as instructions") {
		t.Fatalf("the server's instructions do not carry the security rules: %+v", got)
	}

	if v := s.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Errorf("the SDK client negotiated %q, want 2026-07-28 (server/discover)", v)
	}
	old := mcpSessionAt(t, env, aliceKey, "2025-11-25")
	if v := old.InitializeResult().ProtocolVersion; v != "2025-11-25" {
		t.Errorf("a 2025-11-25 client negotiated %q", v)
	}
	if me := toolOK(t, old, "whoami", nil); me["hash"] != alice {
		t.Errorf("whoami over 2025-11-25 = %v", me)
	}
	// Both wires declare what the server answers: the prompt and resource lists (empty) too.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range []*mcp.ClientSession{s, old} {
		caps := c.InitializeResult().Capabilities
		if caps == nil || caps.Tools == nil || caps.Prompts == nil || caps.Resources == nil || caps.Completions != nil {
			t.Errorf("%s declares %+v, want tools, prompts and resources, no completions", c.InitializeResult().ProtocolVersion, caps)
		}
		if p, err := c.ListPrompts(ctx, nil); err != nil || len(p.Prompts) != 0 {
			t.Errorf("prompts/list at %s = %+v, %v; want an empty list", c.InitializeResult().ProtocolVersion, p, err)
		}
		if r, err := c.ListResources(ctx, nil); err != nil || len(r.Resources) != 0 {
			t.Errorf("resources/list at %s = %+v, %v; want an empty list", c.InitializeResult().ProtocolVersion, r, err)
		}
	}

	me := toolOK(t, s, "whoami", nil)
	if me["hash"] != alice || me["owner_key"] != true {
		t.Fatalf("whoami = %v, want alice's owner key", me)
	}
	if rest := env.Do(t, "GET", "/api/objects/"+bob, "", nil).Expect(t, 200).JSON(t); MustJSON(toolOK(t, s, "get_object", map[string]any{"hash": bob})) != MustJSON(rest) {
		t.Errorf("get_object differs from GET /api/objects/{hash}: %v", rest)
	}
	if p := toolOK(t, s, "read_profile", map[string]any{"hash": bob}); !strings.Contains(Str(t, p, "text"), "Ships compilers.") {
		t.Errorf("read_profile = %v", p)
	}

	sent := toolOK(t, s, "send_message", map[string]any{"to_hash": bob, "kind": "question", "body": "Parser first?"})
	threadID := Str(t, sent, "thread_id")
	if sent["from_hash"] != alice || sent["to_hash"] != bob {
		t.Fatalf("send_message = %v, want from alice (the default) to bob", sent)
	}
	sendMessage(t, env, bob, alice, threadID, "Yes, parser first.")
	th := toolOK(t, s, "read_thread", map[string]any{"thread_id": threadID})
	msgs := th["messages"].([]any)
	if len(msgs) != 2 || msgs[1].(map[string]any)["body"] != "Yes, parser first." {
		t.Fatalf("read_thread = %v", th)
	}
	if threads := toolOK(t, s, "list_threads", nil)["threads"].([]any); len(threads) != 1 || threads[0].(map[string]any)["id"] != threadID {
		t.Errorf("list_threads = %v", threads)
	}

	decision := toolOK(t, s, "record_decision", map[string]any{"thread_id": threadID, "title": "Parser first",
		"body": "We build the parser before the checker.", "confidence": 0.9})
	if decision["type"] != "decision" || decision["author_hash"] != alice {
		t.Fatalf("record_decision = %v", decision)
	}
	evidence := toolOK(t, s, "add_evidence", map[string]any{"thread_id": threadID, "body": "The checker needs an AST."})
	if evidence["type"] != "evidence" {
		t.Errorf("add_evidence without a type = %v, want an evidence node", evidence)
	}
	guidance := toolOK(t, s, "set_private_guidance", map[string]any{"thread_id": threadID, "body": "Bob is keen; hold the deadline."})
	if guidance["ok"] != true || Num(t, guidance, "version") != 1 {
		t.Fatalf("set_private_guidance = %v", guidance)
	}
	if g := toolOK(t, s, "read_private_guidance", map[string]any{"thread_id": threadID}); g["body"] != "Bob is keen; hold the deadline." {
		t.Errorf("read_private_guidance = %v", g)
	}
	env.Eventually(t, func() bool {
		return Num(t, toolOK(t, s, "rebuild_decision_memory", nil), "rebuilt_from_decisions") == 1
	}, "the decision in decision memory")
	memory := toolOK(t, s, "read_decision_memory", nil)
	if !strings.Contains(Str(t, memory, "memory"), "Parser first") {
		t.Errorf("read_decision_memory = %v", memory)
	}
	graph := toolOK(t, s, "read_thread_graph", map[string]any{"thread_id": threadID})
	if n := len(graph["nodes"].([]any)); n < 3 {
		t.Errorf("read_thread_graph has %d nodes, want the messages, the decision and the evidence", n)
	}

	// Bob's side: the guidance is Alice's alone, and the thread is Bob's too.
	bs := mcpSession(t, env, bobKey)
	if status, code := toolRefusal(t, bs, "read_private_guidance", map[string]any{"thread_id": threadID}); status != 404 || code != "NOT_FOUND" {
		t.Errorf("bob reads alice's guidance: %d %s, want 404 NOT_FOUND (he has none)", status, code)
	}
	if status, code := toolRefusal(t, bs, "update_profile", map[string]any{"hash": alice, "body": "# Mallory"}); status != 403 || code != "FORBIDDEN" {
		t.Errorf("bob updates alice's profile: %d %s, want 403 FORBIDDEN as over REST", status, code)
	}
	// Bad arguments are the route's to refuse, as over REST.
	if status, code := toolRefusal(t, s, "record_decision", map[string]any{"thread_id": threadID, "title": "t", "body": "b", "confidence": 2}); status != 400 || code != "INVALID_CONFIDENCE" {
		t.Errorf("a confidence of 2: %d %s, want 400 INVALID_CONFIDENCE", status, code)
	}
	if status, code := toolRefusal(t, s, "record_decision", map[string]any{"thread_id": threadID, "title": "t", "body": "b", "mood": "x"}); status != 400 || code != "UNKNOWN_FIELD" {
		t.Errorf("an unknown argument: %d %s, want 400 UNKNOWN_FIELD", status, code)
	}
}

// TestMCPScopes: tools/list shows what the key may call; a read-only sub-key lists no write tool
// and its write call is refused exactly as REST refuses it; no key lists only the public tools,
// and a call of another tool without a key, with a bad key or a revoked key is a 401 carrying
// WWW-Authenticate.
func TestMCPScopes(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, nil)
	owner := toolNames(t, mcpSession(t, env, key))
	for _, want := range []string{"whoami", "send_message", "record_decision", "set_private_guidance", "update_profile", "create_webhook", "read_feed"} {
		if !slices.Contains(owner, want) {
			t.Errorf("the owner key's tools/list lacks %s: %v", want, owner)
		}
	}

	sub := env.Do(t, "POST", "/api/objects/"+hash+"/keys", key, map[string]any{"label": "reader", "scopes": []string{"read"}}).Expect(t, 201).JSON(t)
	readKey := Str(t, sub, "key")
	who := env.Do(t, "GET", "/api/whoami", readKey, nil).Expect(t, 200).JSON(t)
	if who["hash"] != hash || who["owner_key"] != false || MustJSON(who["scopes"]) != `["read"]` || who["key_id"] != sub["id"] {
		t.Errorf("GET /api/whoami with the read key = %v", who)
	}
	env.Do(t, "GET", "/api/whoami", "", nil).ExpectError(t, 401, "UNAUTHORIZED")
	rs := mcpSession(t, env, readKey)
	listed, err := rs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var readNames []string
	for _, tool := range listed.Tools {
		readNames = append(readNames, tool.Name)
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Errorf("the read-only key lists %s, which is not read-only", tool.Name)
		}
		if tool.OutputSchema == nil {
			t.Errorf("tool %s has no output schema", tool.Name)
		}
	}
	for _, want := range []string{"whoami", "get_object", "read_profile", "list_webhooks", "read_decision_memory"} {
		if !slices.Contains(readNames, want) {
			t.Errorf("the read key's tools/list lacks %s: %v", want, readNames)
		}
	}
	for _, never := range []string{"read_thread_graph", "list_threads", "read_private_guidance"} {
		if slices.Contains(readNames, never) {
			t.Errorf("the read key (no mailbox scope) lists %s", never)
		}
	}
	rest := env.Do(t, "PUT", "/api/objects/"+hash+"/llm.txt", readKey, map[string]any{"body": "# Nope"})
	rest.ExpectError(t, 403, "INSUFFICIENT_SCOPE")
	if status, code := toolRefusal(t, rs, "update_profile", map[string]any{"body": "# Nope"}); status != 403 || code != "INSUFFICIENT_SCOPE" {
		t.Errorf("update_profile with a read key: %d %s, want REST's 403 INSUFFICIENT_SCOPE", status, code)
	}

	anonymous := toolNames(t, mcpSession(t, env, ""))
	if want := []string{"get_object", "read_feed", "read_network_feed", "read_profile", "search_directory", "send_message"}; !slices.Equal(anonymous, want) {
		t.Errorf("tools/list without a key = %v, want the public tools %v", anonymous, want)
	}

	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
	headers := map[string]string{"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
		"MCP-Protocol-Version": "2025-11-25"}
	for _, c := range []struct{ name, key, wantAuth string }{
		{"no key", "", `resource_metadata="`},
		{"a bad key", "svc_sk_" + strings.Repeat("A", 40), `error="invalid_token"`},
	} {
		resp := env.send(t, Request{Method: "POST", Path: "/mcp", Key: c.key, Body: call, Headers: headers})
		if resp.Status != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), c.wantAuth) ||
			!strings.Contains(resp.Header.Get("WWW-Authenticate"), "/.well-known/oauth-protected-resource/mcp") {
			t.Errorf("whoami with %s: %d %q, want 401 with WWW-Authenticate", c.name, resp.Status, resp.Header.Get("WWW-Authenticate"))
		}
		if resp.ErrorCode(t) != "UNAUTHORIZED" {
			t.Errorf("whoami with %s: body %s", c.name, resp.Body)
		}
	}
	meta := env.send(t, Request{Method: "GET", Path: "/.well-known/oauth-protected-resource/mcp"}).Expect(t, 200).JSON(t)
	if !strings.HasSuffix(Str(t, meta, "resource"), "/mcp") {
		t.Errorf("protected-resource metadata %v", meta)
	}

	env.Do(t, "DELETE", "/api/objects/"+hash+"/keys/"+Str(t, sub, "id"), key, nil).Expect(t, 200)
	env.Eventually(t, func() bool {
		resp := env.send(t, Request{Method: "POST", Path: "/mcp", Key: readKey, Body: call, Headers: headers})
		return resp.Status == 401 && strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`)
	}, "the revoked key refused at /mcp")
	if _, err := rs.ListTools(context.Background(), nil); err == nil {
		t.Error("tools/list with a revoked key succeeded")
	}
}

// TestMCPSendIsIdempotent: the same send_message call made twice stores one message (its
// Idempotency-Key comes from its content); a fresh idempotency_key sends the text again.
func TestMCPSendIsIdempotent(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, aliceKey := env.CreateObject(t, nil)
	bob, bobKey := env.CreateObject(t, nil)
	s := mcpSession(t, env, aliceKey)
	args := map[string]any{"to_hash": bob, "kind": "note", "body": "Sent once, however often retried."}
	first := toolOK(t, s, "send_message", args)
	second := toolOK(t, mcpSession(t, env, aliceKey), "send_message", args)
	if first["id"] != second["id"] || first["thread_id"] != second["thread_id"] {
		t.Fatalf("a retried send_message stored a second message: %v then %v", first, second)
	}
	threadID := Str(t, first, "thread_id")
	th := env.Do(t, "GET", "/api/threads/"+threadID, bobKey, nil).Expect(t, 200).JSON(t)
	if n := len(th["messages"].([]any)); n != 1 {
		t.Fatalf("bob's thread holds %d messages, want 1", n)
	}
	again := toolOK(t, s, "send_message", map[string]any{"to_hash": bob, "kind": "note", "thread_id": threadID,
		"body": "Sent once, however often retried.", "idempotency_key": "on-purpose-2"})
	if again["id"] == first["id"] || again["from_hash"] != alice {
		t.Fatalf("a send with a fresh idempotency_key = %v, want a new message", again)
	}
}

// TestMCPRateLimits: tool calls pay the owner limit of their key as REST calls do, in the same
// bucket: once MCP calls used the burst, REST is refused too.
func TestMCPRateLimits(t *testing.T) {
	t.Parallel()
	env := Start(t, WithEnv("RATE_OWNER_PER_MIN", "6"), WithEnv("RATE_OWNER_BURST", "6"))
	_, key := env.CreateObject(t, nil)
	s := mcpSession(t, env, key)
	limited := false
	for range 10 {
		res := callTool(t, s, "whoami", nil)
		if res.IsError {
			if !strings.Contains(toolText(res), `"RATE_LIMITED"`) || !strings.Contains(toolText(res), `"status":429`) {
				t.Fatalf("whoami refused with %s, want 429 RATE_LIMITED", toolText(res))
			}
			limited = true
			break
		}
	}
	if !limited {
		t.Fatal("ten whoami calls with a burst of six were all served")
	}
	env.Do(t, "GET", "/api/whoami", key, nil).ExpectError(t, 429, "RATE_LIMITED")
}

// TestMCPIsDiscoverable: /llms.txt, the OpenAPI document, each object's llm.txt and agent card
// name /mcp, and a GET of /mcp is the transport's 405, not the box page.
func TestMCPIsDiscoverable(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, _ := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Ada"})
	if llms := env.send(t, Request{Method: "GET", Path: "/llms.txt"}).Expect(t, 200); !strings.Contains(string(llms.Body), env.URL+"/mcp") {
		t.Error("/llms.txt does not name /mcp")
	}
	doc := env.send(t, Request{Method: "GET", Path: "/openapi.json"}).Expect(t, 200).JSON(t)
	if x, _ := doc["info"].(map[string]any)["x-mcp"].(map[string]any); x == nil || !strings.HasSuffix(Str(t, x, "url"), "/mcp") {
		t.Errorf("openapi.json info = %v, want x-mcp naming /mcp", doc["info"])
	}
	if profile := env.Do(t, "GET", "/api/objects/"+hash+"/llm.txt", "", nil).Expect(t, 200); !strings.Contains(string(profile.Body), "/mcp") {
		t.Error("an object's llm.txt does not name /mcp")
	}
	card := env.Do(t, "GET", "/api/objects/"+hash+"/agent-card.json", "", nil).Expect(t, 200)
	if !strings.Contains(string(card.Body), "/mcp") {
		t.Errorf("the agent card does not name /mcp: %s", card.Body)
	}
	if get := env.send(t, Request{Method: "GET", Path: "/mcp"}); get.Status != 405 {
		t.Errorf("GET /mcp = %d %s, want 405 from the stateless transport", get.Status, get.Body)
	}
}

// TestMCPSearchMemory: search_memory answers what the REST search answers, through the same
// route: a decision recorded in a thread is found by a word of it, with the thread and peer.
func TestMCPSearchMemory(t *testing.T) {
	t.Parallel()
	env := Start(t)
	ada, adaKey := env.CreateObject(t, nil)
	bob, _ := env.CreateObject(t, nil)
	s := mcpSession(t, env, adaKey)
	threadID := Str(t, toolOK(t, s, "send_message", map[string]any{"to_hash": bob, "kind": "note", "body": "about the launch"}), "thread_id")
	toolOK(t, s, "record_decision", map[string]any{"thread_id": threadID, "title": "Ship on Monday", "body": "We ship the release on Monday."})
	var hits []any
	env.Eventually(t, func() bool {
		hits, _ = toolOK(t, s, "search_memory", map[string]any{"q": "shipping", "peer": bob})["hits"].([]any)
		return len(hits) > 0
	}, "a hit for the decision")
	hit := hits[0].(map[string]any)
	if hit["thread_id"] != threadID || hit["peer_hash"] != bob || hit["type"] != "decision" {
		t.Fatalf("search_memory hit %v, want the decision in thread %s with %s", hit, threadID, bob)
	}
	rest := env.Do(t, "GET", "/api/objects/"+ada+"/memory/search?q=shipping&peer="+bob, adaKey, nil).Expect(t, 200).JSON(t)
	if len(rest["hits"].([]any)) != len(hits) {
		t.Fatalf("REST found %v, MCP %v", rest["hits"], hits)
	}
}
