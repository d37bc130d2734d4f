package mcpserver

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/svcdev/svc/gateway/internal/routes"
)

// TestEveryRouteHasATool checks the tools against the route table: every route has a tool or a
// reason in NoTool, every tool and every NoTool line names a route that exists, and no route has
// both, so that a new route cannot lack its tool silently nor a tool outlive its route.
func TestEveryRouteHasATool(t *testing.T) {
	t.Parallel()
	table := map[string]routes.Route{}
	for _, r := range routes.All() {
		table[r.Method+" "+r.Path] = r
	}
	tooled := map[string]string{}
	names := map[string]bool{}
	for _, tool := range Tools {
		if names[tool.Name] {
			t.Errorf("tool name %s is used twice", tool.Name)
		}
		names[tool.Name] = true
		if _, ok := table[tool.Route]; !ok {
			t.Errorf("tool %s calls %s, which is not in the route table", tool.Name, tool.Route)
		}
		if prev, ok := tooled[tool.Route]; ok {
			t.Errorf("tools %s and %s call the same route %s", prev, tool.Name, tool.Route)
		}
		tooled[tool.Route] = tool.Name
		if _, ok := NoTool[tool.Route]; ok {
			t.Errorf("route %s has the tool %s and a NoTool reason", tool.Route, tool.Name)
		}
	}
	for key, reason := range NoTool {
		if _, ok := table[key]; !ok {
			t.Errorf("NoTool names %s, which is not in the route table", key)
		}
		if reason == "" {
			t.Errorf("NoTool gives no reason for %s", key)
		}
	}
	for key := range table {
		_, hasTool := tooled[key]
		_, skipped := NoTool[key]
		if !hasTool && !skipped {
			t.Errorf("route %s has no MCP tool: add one to Tools, or its reason to NoTool", key)
		}
	}
}

// TestToolSchemas builds every tool over the whole table and checks that its input and output
// schemas compile as JSON Schema 2020-12 and stand alone (no reference left), and that the hints
// agree with the route: a read-only tool is a GET, a GET is never destructive.
func TestToolSchemas(t *testing.T) {
	t.Parallel()
	table := map[string]routes.Route{}
	for _, r := range routes.All() {
		table[r.Method+" "+r.Path] = r
	}
	named := routes.Schemas()
	for _, tool := range Tools {
		r := table[tool.Route]
		mt, _, err := describe(tool, r, named)
		if err != nil {
			t.Errorf("tool %s: %v", tool.Name, err)
			continue
		}
		for what, s := range map[string]any{"input": mt.InputSchema, "output": mt.OutputSchema} {
			raw, _ := json.Marshal(s)
			if bytes.Contains(raw, []byte(`"$ref"`)) {
				t.Errorf("tool %s: the %s schema keeps a reference: %s", tool.Name, what, raw)
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			c := jsonschema.NewCompiler()
			c.DefaultDraft(jsonschema.Draft2020)
			if err := c.AddResource("mem://s.json", doc); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Compile("mem://s.json"); err != nil {
				t.Errorf("tool %s: the %s schema does not compile: %v", tool.Name, what, err)
			}
		}
		if tool.ReadOnly && r.Method != "GET" {
			t.Errorf("tool %s is read-only but calls %s", tool.Name, tool.Route)
		}
		if r.Method == "GET" && (tool.Destructive || !tool.Idempotent) {
			t.Errorf("tool %s calls %s: it cannot be destructive and is idempotent", tool.Name, tool.Route)
		}
		if r.Method == "DELETE" && !tool.Destructive {
			t.Errorf("tool %s deletes (%s) but is not marked destructive", tool.Name, tool.Route)
		}
		if tool.Description == "" || tool.Title == "" {
			t.Errorf("tool %s lacks a title or description", tool.Name)
		}
	}
}

// TestInputSchemaShape checks the flattening on send_message and record_decision: path
// parameters in snake case and required, body fields required as the route requires them, the
// own-hash and content-key defaults optional.
func TestInputSchemaShape(t *testing.T) {
	t.Parallel()
	named := routes.Schemas()
	table := map[string]routes.Route{}
	for _, r := range routes.All() {
		table[r.Method+" "+r.Path] = r
	}
	for _, c := range []struct {
		tool     string
		required []string
		optional []string
	}{
		{"send_message", []string{"to_hash", "kind", "body"}, []string{"from_hash", "thread_id", "idempotency_key", "signature", "signed_at", "nonce"}},
		{"record_decision", []string{"thread_id", "title", "body"}, []string{"confidence", "supersedes_node_ids", "valid_from", "valid_until"}},
		{"update_profile", []string{"body"}, []string{"hash"}},
		{"add_evidence", []string{"thread_id", "body"}, []string{"type", "visibility"}},
		{"read_webhook", []string{"subscription_id"}, []string{"hash"}},
		{"search_memory", []string{"q"}, []string{"hash", "types", "peer", "since", "until", "as_of", "valid_at", "include_superseded", "limit", "cursor"}},
	} {
		i := slices.IndexFunc(Tools, func(x Tool) bool { return x.Name == c.tool })
		s, err := inputSchema(Tools[i], table[Tools[i].Route], named)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := s["required"].([]string)
		props := s["properties"].(map[string]any)
		for _, name := range c.required {
			if !slices.Contains(req, name) {
				t.Errorf("%s: %s should be required (required: %v)", c.tool, name, req)
			}
		}
		for _, name := range c.optional {
			if _, ok := props[name]; !ok || slices.Contains(req, name) {
				t.Errorf("%s: %s should be an optional argument", c.tool, name)
			}
		}
		if len(props) != len(c.required)+len(c.optional) {
			t.Errorf("%s: arguments %v, want exactly %v and %v", c.tool, sortedKeys(props), c.required, c.optional)
		}
	}
}

// TestDecisionMemoryOutputSchema: read_decision_memory's output schema is a JSON object in one of
// the route's shapes: the markdown with its versions, one version, or the structured decisions
// of format=json; a mix of shapes is refused.
func TestDecisionMemoryOutputSchema(t *testing.T) {
	t.Parallel()
	var tool Tool
	for _, tl := range Tools {
		if tl.Name == "read_decision_memory" {
			tool = tl
		}
	}
	var route routes.Route
	for _, r := range routes.All() {
		if r.Method+" "+r.Path == tool.Route {
			route = r
		}
	}
	mt, _, err := describe(tool, route, routes.Schemas())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(mt.OutputSchema)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource("mem://out.json", doc); err != nil {
		t.Fatal(err)
	}
	schema, err := c.Compile("mem://out.json")
	if err != nil {
		t.Fatal(err)
	}
	if mt.OutputSchema.(map[string]any)["type"] != "object" {
		t.Fatalf("output schema %s is not an object", raw)
	}
	for _, tc := range []struct {
		name, body string
		valid      bool
	}{
		{"markdown", `{"memory":"# M","version":2,"versions":[{"version":2,"change":"put","created_at":"2026-11-24T18:00:00.000Z"}],"next_cursor":null}`, true},
		{"one version", `{"version":1,"change":"carried","created_at":"2026-11-24T18:00:00.000Z","memory":"# Old"}`, true},
		{"json", `{"version":2,"decisions":[{"id":"nod_b","thread_id":"thr_1","title":"Ship on Monday","body":"b","confidence":null,` +
			`"created_at":"2026-11-24T18:00:00.000Z","valid_from":"2027-03-01T00:00:00.000Z","valid_until":null,"supersedes":[{"id":"nod_a","title":"Ship on Friday"}]}],` +
			`"superseded":[{"id":"nod_a","thread_id":"thr_1","title":"Ship on Friday","created_at":"2026-11-24T17:00:00.000Z","superseded_by":"nod_b","superseded_at":"2026-11-24T18:00:00.000Z"}]}`, true},
		{"mixed", `{"memory":"# M","version":2,"decisions":[],"superseded":[]}`, false},
		{"bad validity", `{"version":2,"decisions":[{"id":"nod_b","thread_id":"thr_1","title":"t","body":"b","confidence":null,` +
			`"created_at":"2026-11-24T18:00:00.000Z","valid_from":"Monday","valid_until":null,"supersedes":[]}],"superseded":[]}`, false},
	} {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader([]byte(tc.body)))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(inst); (err == nil) != tc.valid {
			t.Errorf("%s: valid %v, want %v (%v)", tc.name, err == nil, tc.valid, err)
		}
	}
}

// TestAnonymousInputSchema: without a key there is no own hash to default from_hash to, so the
// schema a caller without a key is shown requires it, as the route does; tools without such a
// field have one schema for every caller.
func TestAnonymousInputSchema(t *testing.T) {
	t.Parallel()
	named := routes.Schemas()
	table := map[string]routes.Route{}
	for _, r := range routes.All() {
		table[r.Method+" "+r.Path] = r
	}
	for _, tool := range Tools {
		anon, err := anonymousInputSchema(tool, table[tool.Route], named)
		if err != nil {
			t.Fatal(err)
		}
		if tool.Name != "send_message" {
			if anon != nil {
				t.Errorf("%s: a schema of its own for callers without a key, want none", tool.Name)
			}
			continue
		}
		req, _ := anon["required"].([]string)
		for _, name := range []string{"from_hash", "to_hash", "kind", "body"} {
			if !slices.Contains(req, name) {
				t.Errorf("send_message without a key: %s should be required (required: %v)", name, req)
			}
		}
	}
}
