package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestMCPDecisionMemoryShapes: read_decision_memory answers what REST answers in each of its
// shapes (the markdown, format=json, one version), and each answer matches the tool's output
// schema as tools/list gives it; record_decision takes world time.
func TestMCPDecisionMemoryShapes(t *testing.T) {
	t.Parallel()
	env := Start(t)
	ada, adaKey := env.CreateObject(t, nil)
	bob, _ := env.CreateObject(t, nil)
	s := mcpSession(t, env, adaKey)
	threadID := Str(t, toolOK(t, s, "send_message", map[string]any{"to_hash": bob, "kind": "note", "body": "about the launch"}), "thread_id")
	d := toolOK(t, s, "record_decision", map[string]any{"thread_id": threadID, "title": "Ship on Monday", "body": "We ship on Monday.",
		"valid_from": "2027-03-01T00:00:00Z"})
	if d["valid_from"] != "2027-03-01T00:00:00.000Z" || d["valid_until"] != nil {
		t.Errorf("record_decision with world time = %v", d)
	}
	env.Eventually(t, func() bool {
		return Num(t, toolOK(t, s, "rebuild_decision_memory", nil), "rebuilt_from_decisions") == 1
	}, "the decision in decision memory")

	listed, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var schema *jsonschema.Schema
	for _, tool := range listed.Tools {
		if tool.Name != "read_decision_memory" {
			continue
		}
		raw, _ := json.Marshal(tool.OutputSchema)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat()
		if err := c.AddResource("mem://read_decision_memory.json", doc); err != nil {
			t.Fatal(err)
		}
		if schema, err = c.Compile("mem://read_decision_memory.json"); err != nil {
			t.Fatal(err)
		}
	}
	if schema == nil {
		t.Fatal("tools/list lacks read_decision_memory")
	}
	path := "/api/objects/" + ada + "/decision-memory"
	for _, tc := range []struct {
		args  map[string]any
		query string
	}{
		{nil, ""},
		{map[string]any{"format": "json"}, "?format=json"},
		{map[string]any{"version": 1}, "?version=1"},
	} {
		got := toolOK(t, s, "read_decision_memory", tc.args)
		raw, _ := json.Marshal(got)
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if err := schema.Validate(inst); err != nil {
			t.Errorf("read_decision_memory %v answered %s, which its output schema refuses: %v", tc.args, raw, err)
		}
		if rest := env.Do(t, "GET", path+tc.query, adaKey, nil).Expect(t, 200).JSON(t); MustJSON(rest) != MustJSON(got) {
			t.Errorf("read_decision_memory %v = %s, REST %s", tc.args, raw, MustJSON(rest))
		}
	}
	if j := toolOK(t, s, "read_decision_memory", map[string]any{"format": "json"}); len(j["decisions"].([]any)) != 1 ||
		j["decisions"].([]any)[0].(map[string]any)["valid_from"] != "2027-03-01T00:00:00.000Z" {
		t.Errorf("read_decision_memory format=json = %v", j)
	}
}
