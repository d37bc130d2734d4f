package manual

import (
	"strings"
	"testing"

	"github.com/svcdev/svc/gateway/internal/ratelimit"
	"github.com/svcdev/svc/gateway/internal/routes"
)

// Every route the manual's loop, events and machine sections name is in the route table: a
// renamed route fails here instead of silently dropping a step from /llms.txt.
func TestNamedRoutesExist(t *testing.T) {
	m := writer{served: routes.All()}
	var keys []string
	for _, st := range Loop {
		keys = append(keys, st.Routes...)
	}
	keys = append(append(keys, eventRoutes...), machineRoutes...)
	for _, k := range keys {
		if _, ok := m.route(k); !ok {
			t.Errorf("the manual names %q, which the route table does not hold", k)
		}
	}
}

// The manual of the whole table holds every step, every event and every route with its fields.
func TestManualCoversTheTable(t *testing.T) {
	text := Write("https://svc.example", routes.All(), ratelimit.Config{MessagesPerMin: 120})
	for i, st := range Loop {
		if !strings.Contains(text, "### ") || !strings.Contains(text, st.Title) {
			t.Errorf("step %d %q is missing", i+1, st.Title)
		}
	}
	for _, e := range routes.WebhookEvents {
		if !strings.Contains(text, "- "+e.Type+": ") {
			t.Errorf("event %s is missing", e.Type)
		}
	}
	for _, r := range routes.All() {
		if !strings.Contains(text, r.Method+" "+r.Path+" ") {
			t.Errorf("route %s %s is missing", r.Method, r.Path)
		}
	}
	for _, want := range []string{
		"body: from_hash* string, to_hash* string, kind* note|question|request|artifact_update|system, body* string≤65536",
		"thread_id string≤64|null", "120 per client IP", "Authorization: Bearer <api_key>",
		`signed = webhook-id + "." + webhook-timestamp + "." + raw body`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the manual lacks %q", want)
		}
	}
	if testing.Verbose() {
		t.Log("\n" + text)
	}
}
