package mcpserver

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/svcdev/svc/gateway/internal/routes"
	"github.com/svcdev/svc/pkg/authn"
)

func bound(t *testing.T, name string) boundTool {
	t.Helper()
	table := map[string]routes.Route{}
	for _, r := range routes.All() {
		table[r.Method+" "+r.Path] = r
	}
	for _, tool := range Tools {
		if tool.Name == name {
			_, bt, err := describe(tool, table[tool.Route], routes.Schemas())
			if err != nil {
				t.Fatal(err)
			}
			return bt
		}
	}
	t.Fatalf("no tool %s", name)
	return boundTool{}
}

// TestBuildCall: arguments become the route's path (escaped), query and body; owner tools
// default to the caller's hash; send_message defaults from_hash and derives one Idempotency-Key
// per content, whatever the order of its fields.
func TestBuildCall(t *testing.T) {
	t.Parallel()
	me := &caller{principal: &authn.Principal{Hash: "svc_me", KeyID: "key_1"}}
	secret := []byte("gateway secret")
	anonymous := &caller{}
	for _, c := range []struct {
		name, tool string
		who        *caller
		args       string
		target     string
		body       string
		err        string
	}{
		{"path and query", "read_thread", me, `{"thread_id":"th_1","limit":5,"cursor":"c"}`, "/api/threads/th_1?cursor=c&limit=5", "", ""},
		{"a path argument with a slash", "get_object", me, `{"hash":"svc_a/mailbox"}`, "", "", `the argument hash must not contain '/', '\', '?', '#' or '%'`},
		{"a path argument that climbs", "get_object", me, `{"hash":".."}`, "", "", `the argument hash must not contain '/', '\', '?', '#' or '%'`},
		{"own hash", "read_decision_memory", me, `{}`, "/api/objects/svc_me/decision-memory", "", ""},
		{"named hash", "list_webhooks", me, `{"hash":"svc_other"}`, "/api/objects/svc_other/webhooks", "", ""},
		{"no hash without a key", "list_threads", anonymous, `{}`, "", "", "the argument hash is required"},
		{"a required path argument", "read_thread", me, `{}`, "", "", "the argument thread_id is required"},
		{"a non-string path argument", "get_object", me, `{"hash":5}`, "", "", "the argument hash must be a string"},
		{"an unknown argument on a bodiless route", "whoami", me, `{"x":1}`, "", "", `unknown argument "x"`},
		{"not an object", "whoami", me, `[1]`, "", "", "the arguments must be a JSON object"},
		{"body with a default", "add_evidence", me, `{"thread_id":"t1","body":"b"}`, "/api/threads/t1/nodes", `{"body":"b","type":"evidence"}`, ""},
		{"from_hash defaults", "send_message", me, `{"to_hash":"svc_b","kind":"note","body":"hi"}`, "/api/messages",
			`{"body":"hi","from_hash":"svc_me","kind":"note","to_hash":"svc_b"}`, ""},
		{"from_hash left to the route without a key", "send_message", anonymous, `{"to_hash":"svc_b","kind":"note","body":"hi"}`,
			"/api/messages", `{"body":"hi","kind":"note","to_hash":"svc_b"}`, ""},
	} {
		call, err := buildCall(bound(t, c.tool), c.who, json.RawMessage(c.args), secret)
		if c.err != "" {
			var bad errArgument
			if !errors.As(err, &bad) || bad.msg != c.err {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if call.target != c.target || string(call.body) != c.body {
			t.Errorf("%s: %s %s, want %s %s", c.name, call.target, call.body, c.target, c.body)
		}
	}

	send := bound(t, "send_message")
	a, _ := buildCall(send, me, json.RawMessage(`{"to_hash":"svc_b","kind":"note","body":"hi"}`), secret)
	b, _ := buildCall(send, me, json.RawMessage(`{"body":"hi","kind":"note","to_hash":"svc_b","from_hash":"svc_me"}`), secret)
	other, _ := buildCall(send, me, json.RawMessage(`{"to_hash":"svc_b","kind":"note","body":"hi!"}`), secret)
	chosen, _ := buildCall(send, me, json.RawMessage(`{"to_hash":"svc_b","kind":"note","body":"hi","idempotency_key":"k1"}`), secret)
	if a.idempotencyKey == "" || a.idempotencyKey != b.idempotencyKey || a.idempotencyKey == other.idempotencyKey || chosen.idempotencyKey != "k1" {
		t.Errorf("idempotency keys %q %q %q %q: want one per content, and the caller's when given",
			a.idempotencyKey, b.idempotencyKey, other.idempotencyKey, chosen.idempotencyKey)
	}
	// Another key of the same object, or another secret, derives another key: no one but the
	// gateway can compute a caller's key from the content.
	sub := &caller{principal: &authn.Principal{Hash: "svc_me", KeyID: "key_2"}}
	bySub, _ := buildCall(send, sub, json.RawMessage(`{"to_hash":"svc_b","kind":"note","body":"hi"}`), secret)
	otherSecret, _ := buildCall(send, me, json.RawMessage(`{"to_hash":"svc_b","kind":"note","body":"hi"}`), []byte("another"))
	if bySub.idempotencyKey == a.idempotencyKey || otherSecret.idempotencyKey == a.idempotencyKey {
		t.Errorf("derived keys do not depend on the caller and the secret: %q %q %q", a.idempotencyKey, bySub.idempotencyKey, otherSecret.idempotencyKey)
	}
	if len(a.idempotencyKey) > 255 {
		t.Errorf("the derived key is longer than the route takes: %d", len(a.idempotencyKey))
	}
}
