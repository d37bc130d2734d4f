package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// requiredFixture is a stack with one of everything a route or tool may need to name: two
// objects with a thread between them, the first a feed with a webhook, and a spare object whose
// hash a custom-hash claim may replace.
type requiredFixture struct {
	env                         *Env
	own, ownKey, peer, peerKey  string
	spare, spareKey             string
	thread, subscription, nodeA string
	nodeB, source               string
}

func newRequiredFixture(t *testing.T) *requiredFixture {
	t.Helper()
	env := Start(t)
	f := &requiredFixture{env: env}
	f.own, f.ownKey = env.CreateObject(t, map[string]any{"initial_llm_txt": "# Required fields\n"})
	f.peer, f.peerKey = env.CreateObject(t, nil)
	f.spare, f.spareKey = env.CreateObject(t, nil)
	f.thread = Str(t, env.Do(t, "POST", "/api/messages", f.ownKey,
		map[string]any{"from_hash": f.own, "to_hash": f.peer, "kind": "note", "body": "hello"}).Expect(t, http.StatusCreated).JSON(t), "thread_id")
	env.Do(t, "POST", "/api/objects/"+f.own+"/feed", f.ownKey, map[string]any{}).Expect(t, http.StatusOK)
	f.subscription = Str(t, env.Do(t, "POST", "/api/objects/"+f.own+"/webhooks", f.ownKey,
		map[string]any{"callback_url": "https://example.com/hook"}).Expect(t, http.StatusCreated).JSON(t), "id")
	node := func(body string) string {
		return Str(t, env.Do(t, "POST", "/api/threads/"+f.thread+"/nodes", f.ownKey,
			map[string]any{"type": "evidence", "body": body}).Expect(t, http.StatusCreated).JSON(t), "id")
	}
	f.nodeA, f.nodeB = node("first evidence"), node("second evidence")
	f.source = Str(t, env.Do(t, "POST", "/api/objects/"+f.own+"/sources", f.ownKey,
		map[string]any{"kind": "text", "text": "A text source"}).Expect(t, http.StatusCreated).JSON(t), "id")
	return f
}

// value is what the fixture fills a field, argument or parameter called name with, or nil when
// it has none: a test meeting a required name it cannot fill fails, so that a new required field
// is a decision of this test, not a silent gap.
func (f *requiredFixture) value(name string) any {
	switch name {
	case "hash", "from_hash", "object_hash", "box":
		return f.own
	case "to_hash", "peer_hash", "blocked_hash":
		return f.peer
	case "thread_id", "threadId":
		return f.thread
	case "subscription_id":
		return f.subscription
	case "from_node_id":
		return f.nodeA
	case "to_node_id":
		return f.nodeB
	case "kind":
		return "note"
	case "body", "llm_txt", "text":
		return "Some words about engines."
	case "title":
		return "A title"
	case "q":
		return "engines"
	case "resource": // WebFinger's
		return "acct:" + f.own + "@" + strings.TrimPrefix(f.env.URL, "http://")
	case "type":
		return "evidence"
	case "status":
		return "archived"
	case "callback_url", "repo_url":
		return "https://example.com/hook"
	case "since":
		return "2026-01-01T00:00:00.000Z"
	case "username":
		return "required" + strings.ToLower(f.spare[len(f.spare)-8:])
	case "proof_type":
		return "domain"
	case "claimed_target":
		return "example.com"
	case "source_ids":
		return []string{f.source}
	case "message":
		return map[string]any{"messageId": "msg-required-fields", "role": "ROLE_USER",
			"parts": []any{map[string]any{"text": "Hello over A2A"}}, "metadata": map[string]any{"from_hash": f.peer, "to_hash": f.own}}
	}
	return nil
}

// routeOverrides are, per route, the values a field takes there besides value's, and the fields a
// documented condition asks for beyond the required ones (the kind a context source is, its text).
var routeOverrides = map[string]map[string]any{
	"POST /api/objects/{hash}/sources":               {"kind": "text", "text": "Some words about engines."},
	"POST /api/threads/{threadId}/edges":             {"type": "supports"},
	"POST /api/objects/{hash}/context-subscriptions": {"callback_url": "https://example.com/context"},
}

// TestLlmsRequiredFieldsAreRequired: every body field and query parameter that /llms.txt and
// openapi.json (both written from the route table) mark required is one the route refuses to
// answer without (400), and a request with only the required ones is not refused as incomplete.
func TestLlmsRequiredFieldsAreRequired(t *testing.T) {
	t.Parallel()
	f := newRequiredFixture(t)
	paths := f.env.spec.Doc["paths"].(map[string]any)
	checked := 0
	for _, tpl := range slices.Sorted(mapKeys(paths)) {
		for _, method := range slices.Sorted(mapKeys(paths[tpl].(map[string]any))) {
			op, ok := paths[tpl].(map[string]any)[method].(map[string]any)
			if !ok {
				continue
			}
			route := strings.ToUpper(method) + " " + tpl
			query, body := f.requiredOf(op)
			if len(query) == 0 && len(body) == 0 {
				continue
			}
			checked++
			f.checkRoute(t, route, query, body)
		}
	}
	if checked < 15 {
		t.Fatalf("checked %d routes with required fields, want the table's (at least 15)", checked)
	}
}

// requiredOf lists the operation's required query parameters and required body fields.
func (f *requiredFixture) requiredOf(op map[string]any) (query, body []string) {
	params, _ := op["parameters"].([]any)
	for _, p := range params {
		pm := p.(map[string]any)
		if pm["in"] == "query" && pm["required"] == true {
			query = append(query, pm["name"].(string))
		}
	}
	rb, _ := op["requestBody"].(map[string]any)
	content, _ := rb["content"].(map[string]any)
	js, _ := content["application/json"].(map[string]any)
	schema, _ := js["schema"].(map[string]any)
	g := &fuzzGen{doc: f.env.spec.Doc}
	schema = g.resolve(schema)
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			body = append(body, r.(string))
		}
	}
	return query, body
}

// checkRoute sends the route with its required fields only, then once without each of them.
func (f *requiredFixture) checkRoute(t *testing.T, route string, query, body []string) {
	t.Helper()
	method, tpl, _ := strings.Cut(route, " ")
	key := f.ownKey
	if strings.HasSuffix(tpl, "/claim-custom-hash") {
		key = f.spareKey // the claim replaces the caller's hash
	}
	path := tpl
	for strings.Contains(path, "{") {
		i, j := strings.Index(path, "{"), strings.Index(path, "}")
		name := path[i+1 : j]
		v, ok := f.value(name).(string)
		if !ok {
			t.Fatalf("%s: no value for the path parameter %s", route, name)
		}
		path = path[:i] + v + path[j+1:]
	}
	fill := func(name string) any {
		if v, ok := routeOverrides[route][name]; ok {
			return v
		}
		v := f.value(name)
		if v == nil {
			t.Fatalf("%s: no value for the required field %s: teach the test one", route, name)
		}
		return v
	}
	request := func(dropQuery, dropBody string) Request {
		q := url.Values{}
		for _, name := range query {
			if name != dropQuery {
				q.Set(name, fmt.Sprint(fill(name)))
			}
		}
		r := Request{Method: method, Path: path, Key: key}
		if len(q) > 0 {
			r.Path += "?" + q.Encode()
		}
		if body != nil {
			b := map[string]any{}
			for name, v := range routeOverrides[route] {
				b[name] = v
			}
			for _, name := range body {
				if name != dropBody {
					b[name] = fill(name)
				} else {
					delete(b, name)
				}
			}
			r.Body = b
		}
		return r
	}
	for _, name := range query {
		res := f.env.Send(t, request(name, ""))
		if res.Status != http.StatusBadRequest {
			t.Errorf("%s without its required query parameter %s: %d, want 400: %s", route, name, res.Status, res.Body)
		}
	}
	for _, name := range body {
		res := f.env.Send(t, request("", name))
		if res.Status != http.StatusBadRequest {
			t.Errorf("%s without its required field %s: %d, want 400: %s", route, name, res.Status, res.Body)
		}
	}
	if res := f.env.Send(t, request("", "")); res.Status == http.StatusBadRequest || res.Status >= 500 {
		t.Errorf("%s with its required fields only (%v %v): %d: %s", route, query, body, res.Status, res.Body)
	}
}

// TestMCPRequiredArgumentsAreTheRoutes: every argument a tool's input schema requires is one its
// route refuses to answer without (the call's result is a 400 refusal), and a call with only the
// required arguments is not refused as incomplete; for a caller without a key, send_message's schema requires
// from_hash, since there is no own hash to default it to.
func TestMCPRequiredArgumentsAreTheRoutes(t *testing.T) {
	t.Parallel()
	f := newRequiredFixture(t)
	tools := mcpTools(t, f.env, f.ownKey)
	names := slices.Sorted(mapKeys(tools))
	// delete_webhook removes the fixture's webhook, which other tools read: it goes last.
	names = append(slices.DeleteFunc(names, func(n string) bool { return n == "delete_webhook" }), "delete_webhook")
	s := mcpSession(t, f.env, f.ownKey)
	for _, name := range names {
		f.checkTool(t, s, name, tools[name])
	}

	anonymous := mcpTools(t, f.env, "")
	send, ok := anonymous["send_message"]
	if !ok {
		t.Fatalf("tools/list without a key lacks send_message")
	}
	if req := schemaRequired(send); !slices.Contains(req, "from_hash") {
		t.Fatalf("send_message without a key: required %v, want from_hash among them", req)
	}
	f.checkTool(t, mcpSession(t, f.env, ""), "send_message", send)
}

func schemaRequired(schema map[string]any) []string {
	var out []string
	req, _ := schema["required"].([]any)
	for _, r := range req {
		out = append(out, r.(string))
	}
	return out
}

// checkTool calls the tool without each required argument, then with the required ones only.
func (f *requiredFixture) checkTool(t *testing.T, s *mcp.ClientSession, name string, schema map[string]any) {
	t.Helper()
	required := schemaRequired(schema)
	args := func(drop string) map[string]any {
		out := map[string]any{}
		for _, arg := range required {
			if arg == drop {
				continue
			}
			v := f.value(arg)
			if v == nil {
				t.Fatalf("tool %s: no value for the required argument %s: teach the test one", name, arg)
			}
			out[arg] = v
		}
		return out
	}
	for _, arg := range required {
		if status, code := toolRefusal(t, s, name, args(arg)); status != http.StatusBadRequest {
			t.Errorf("tool %s without its required argument %s: %d %s, want 400", name, arg, status, code)
		}
	}
	// Refused for what is stored (a guidance never written is NOT_FOUND), never for what is missing.
	if res := callTool(t, s, name, args("")); res.IsError {
		if status, _ := toolRefusal(t, s, name, args("")); status == http.StatusBadRequest || status >= 500 {
			t.Errorf("tool %s with its required arguments %v only: %s", name, required, toolText(res))
		}
	}
}
