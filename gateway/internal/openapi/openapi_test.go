package openapi

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/svcdev/svc/gateway/internal/routes"
)

// TestDocumentIsComplete builds the document of the whole table and checks that every route is
// in it exactly once, every schema it names exists and compiles as JSON Schema 2020-12, and
// operation ids are unique.
func TestDocumentIsComplete(t *testing.T) {
	t.Parallel()
	all := routes.All()
	doc := Build(all, "http://example.test")
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem://openapi.json", parsed); err != nil {
		t.Fatal(err)
	}
	schemas := routes.Schemas()
	for name := range schemas {
		if _, err := c.Compile("mem://openapi.json#/components/schemas/" + name); err != nil {
			t.Errorf("schema %s does not compile: %v", name, err)
		}
	}
	paths := doc["paths"].(map[string]map[string]any)
	ids := map[string]bool{}
	seen := map[string]bool{}
	refs := regexp.MustCompile(`"#/components/schemas/([A-Za-z]+)"`)
	for _, r := range all {
		key := r.Method + " " + r.Path
		if seen[key] {
			t.Errorf("route %s appears twice in the table", key)
		}
		seen[key] = true
		op, ok := paths[r.Path][strings.ToLower(r.Method)].(map[string]any)
		if !ok {
			t.Errorf("route %s is missing from the document", key)
			continue
		}
		id := op["operationId"].(string)
		if ids[id] {
			t.Errorf("operationId %s is not unique", id)
		}
		ids[id] = true
		if r.Service == "" || r.Summary == "" || r.Tag == "" {
			t.Errorf("route %s lacks a service, summary or tag", key)
		}
		opRaw, _ := json.Marshal(op)
		for _, m := range refs.FindAllStringSubmatch(string(opRaw), -1) {
			if _, ok := schemas[m[1]]; !ok {
				t.Errorf("route %s names the undefined schema %s", key, m[1])
			}
		}
	}
}
