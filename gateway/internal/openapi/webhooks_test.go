package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/svcdev/svc/gateway/internal/routes"
)

// TestDocumentPassesKinOpenAPI loads the whole document, webhooks included, with kin-openapi and
// validates it as OpenAPI 3.1.
func TestDocumentPassesKinOpenAPI(t *testing.T) {
	t.Parallel()
	raw, err := json.Marshal(Build(routes.All(), "http://example.test"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatalf("kin-openapi cannot load the document: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("document is OpenAPI %s, want 3.1", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("kin-openapi refuses the document: %v", err)
	}
	if len(doc.Webhooks) != len(routes.WebhookEvents) {
		t.Fatalf("document has %d webhooks, want one per event (%d)", len(doc.Webhooks), len(routes.WebhookEvents))
	}
	for _, e := range routes.WebhookEvents {
		item := doc.Webhooks[e.Type]
		if item == nil || item.Post == nil || item.Post.RequestBody == nil {
			t.Fatalf("webhook %s has no POST with a body", e.Type)
		}
	}
}

// TestCatalogExamplesMatchTheirSchemas compiles each catalog schema on its own (it must stand
// alone) and validates the event's example, and that payloads of the wrong type or with an
// unknown data field are refused.
func TestCatalogExamplesMatchTheirSchemas(t *testing.T) {
	t.Parallel()
	cat := routes.Catalog()["events"].([]any)
	if len(cat) != 6 {
		t.Fatalf("catalog lists %d events, want the six spec events", len(cat))
	}
	for _, entry := range cat {
		e := entry.(map[string]any)
		name := e["type"].(string)
		raw, _ := json.Marshal(e)
		var v map[string]any
		parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		v = parsed.(map[string]any)
		c := jsonschema.NewCompiler()
		c.AssertFormat()
		if err := c.AddResource("mem://"+name+".json", v["schema"]); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile("mem://" + name + ".json")
		if err != nil {
			t.Fatalf("schema of %s does not compile: %v", name, err)
		}
		if err := sch.Validate(v["example"]); err != nil {
			t.Errorf("example of %s does not match its schema: %v", name, err)
		}
		wrong := clone(t, v["example"])
		wrong["type"] = "not_" + name
		if sch.Validate(wrong) == nil {
			t.Errorf("schema of %s accepts another type", name)
		}
		extra := clone(t, v["example"])
		extra["data"].(map[string]any)["api_key"] = "svc_sk_x"
		if sch.Validate(extra) == nil {
			t.Errorf("schema of %s accepts an unknown data field", name)
		}
	}
}

func clone(t *testing.T, v any) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(v)
	out, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return out.(map[string]any)
}
