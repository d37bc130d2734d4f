package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// eventCatalog is GET /api/webhook-events compiled: each event type's payload schema, compiled
// by a JSON Schema validator nobody here wrote.
type eventCatalog map[string]*jsonschema.Schema

func loadCatalog(t testing.TB, env *Env) eventCatalog {
	t.Helper()
	var cat struct {
		Events []struct {
			Type    string          `json:"type"`
			Schema  json.RawMessage `json:"schema"`
			Example json.RawMessage `json:"example"`
		} `json:"events"`
	}
	env.Do(t, "GET", "/api/webhook-events", "", nil).Expect(t, http.StatusOK).Decode(t, &cat)
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	out := eventCatalog{}
	for _, e := range cat.Events {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(e.Schema))
		if err != nil {
			t.Fatalf("catalog schema of %s: %v", e.Type, err)
		}
		url := "mem://webhook-events/" + e.Type
		if err := c.AddResource(url, doc); err != nil {
			t.Fatalf("catalog schema of %s: %v", e.Type, err)
		}
		sch, err := c.Compile(url)
		if err != nil {
			t.Fatalf("catalog schema of %s does not compile: %v", e.Type, err)
		}
		out[e.Type] = sch
		out.check(t, "the catalog's example of "+e.Type, e.Example)
	}
	return out
}

// check fails the test unless payload validates against the catalog schema of its type.
func (c eventCatalog) check(t testing.TB, what string, payload []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(payload))
	if err != nil {
		t.Fatalf("%s is not JSON: %s", what, payload)
	}
	typ, _ := v.(map[string]any)["type"].(string)
	sch := c[typ]
	if sch == nil {
		t.Fatalf("%s has type %q, which the catalog does not list: %s", what, typ, payload)
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("%s does not match the catalog schema of %s: %v\npayload: %s", what, typ, err, payload)
	}
}
