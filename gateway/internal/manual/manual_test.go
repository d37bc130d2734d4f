package manual

import (
	"reflect"
	"strings"
	"testing"

	"github.com/svcdev/svc/gateway/internal/ratelimit"
	"github.com/svcdev/svc/gateway/internal/routes"
	"github.com/svcdev/svc/pkg/config"
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
		// what an agent must know beyond the table: a sender's hash is a claim, decision memory
		// moves on a rebuild, a local callback needs the outbound settings
		"from_hash is only a claim", "sender_verified", "It changes only when it is rebuilt",
		"query q* string≤256: the words to search for", "query limit integer 1–50: hits per page",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the manual lacks %q", want)
		}
	}
	if testing.Verbose() {
		t.Log("\n" + text)
	}
}

// The manual's advice on testing a webhook locally names the outbound settings by the names the
// services read them by, so that a renamed setting fails here instead of misleading an agent.
func TestManualNamesTheOutboundSettings(t *testing.T) {
	text := Write("https://svc.example", routes.All(), ratelimit.Config{})
	typ := reflect.TypeOf(config.Outbound{})
	for _, field := range []string{"AllowPrivate", "CAFile"} {
		f, ok := typ.FieldByName(field)
		if !ok {
			t.Fatalf("config.Outbound has no field %s", field)
		}
		name, _, _ := strings.Cut(f.Tag.Get("env"), ",")
		if !strings.Contains(text, name+"=") && !strings.Contains(text, name+" ") {
			t.Errorf("the manual does not name the outbound setting %s", name)
		}
	}
}
