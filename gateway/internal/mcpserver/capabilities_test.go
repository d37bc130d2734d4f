package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/gin-gonic/gin"

	keyauth "github.com/svcdev/svc/gateway/internal/auth"
	"github.com/svcdev/svc/gateway/internal/ratelimit"
	"github.com/svcdev/svc/gateway/internal/routes"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/httpx"
)

// noKeys refuses every key: these calls present none.
type noKeys struct{}

func (noKeys) Authenticate(context.Context, string, keyauth.Charge) (*authn.Principal, error) {
	return nil, httpx.Unauthorized("no keys here")
}

// noLimit admits every request.
type noLimit struct{}

func (noLimit) Allow(context.Context, ratelimit.Limit, string) error { return nil }

// serveMCP serves /mcp over the whole route table (the routes themselves answer 404: these
// calls list and discover, they call no tool).
func serveMCP(t *testing.T) string {
	t.Helper()
	gin.SetMode(gin.TestMode)
	e := gin.New()
	h, err := New(Options{Routes: routes.All(), Engine: e, Auth: noKeys{}, Limiter: noLimit{},
		Authorize: func(routes.Route, *authn.Principal, *authn.Target) error { return nil },
		BaseURL:   "http://svc.test", Version: "1.0.0", Log: slog.New(slog.DiscardHandler), KeySecret: []byte("secret")})
	if err != nil {
		t.Fatal(err)
	}
	e.POST(Path, h.Serve)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return srv.URL + Path
}

// rpcAnswer is a JSON-RPC answer.
type rpcAnswer struct {
	Result map[string]json.RawMessage `json:"result"`
	Error  *struct {
		Code int `json:"code"`
	} `json:"error"`
}

// call posts one JSON-RPC request: at the 2026-07-28 wire (per-request _meta and the routing
// headers) when version is that revision, with the initialize handshake's headers otherwise.
func call(t *testing.T, url, version, method string, params map[string]any) (int, rpcAnswer) {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	if version == "2026-07-28" {
		params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": version, "io.modelcontextprotocol/clientCapabilities": map[string]any{}}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", version)
	if version == "2026-07-28" {
		req.Header.Set("Mcp-Method", method)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var a rpcAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		t.Fatalf("%s: HTTP %d, not a JSON-RPC answer: %s", method, res.StatusCode, raw)
	}
	return res.StatusCode, a
}

// TestDeclaredCapabilities: initialize (2025-11-25) and server/discover (2026-07-28) declare the
// same capabilities, and those are exactly what the server answers: tools, the (empty) prompt and
// resource lists, logging/setLevel on the older wire; completion/complete, which it does not
// serve, is neither declared nor answered.
func TestDeclaredCapabilities(t *testing.T) {
	t.Parallel()
	url := serveMCP(t)
	want := map[string]any{"tools": map[string]any{}, "prompts": map[string]any{}, "resources": map[string]any{}, "logging": map[string]any{}}
	capsOf := func(method, version string, params map[string]any) map[string]any {
		status, a := call(t, url, version, method, params)
		if status != http.StatusOK || a.Error != nil {
			t.Fatalf("%s: HTTP %d, error %+v", method, status, a.Error)
		}
		var caps map[string]any
		if err := json.Unmarshal(a.Result["capabilities"], &caps); err != nil {
			t.Fatalf("%s: capabilities %s: %v", method, a.Result["capabilities"], err)
		}
		return caps
	}
	initialized := capsOf("initialize", "2025-11-25", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test", "version": "1"}})
	discovered := capsOf("server/discover", "2026-07-28", nil)
	if !reflect.DeepEqual(initialized, want) {
		t.Errorf("initialize declares %v, want %v", initialized, want)
	}
	if !reflect.DeepEqual(discovered, want) {
		t.Errorf("server/discover declares %v, want %v", discovered, want)
	}

	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		for method, field := range map[string]string{"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources", "resources/templates/list": "resourceTemplates"} {
			status, a := call(t, url, version, method, nil)
			if status != http.StatusOK || a.Error != nil || a.Result[field] == nil {
				t.Errorf("%s at %s: HTTP %d, error %+v, result %v: want a %s list", method, version, status, a.Error, a.Result, field)
			}
		}
		ref := map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "any"}, "argument": map[string]any{"name": "a", "value": "v"}}
		if _, a := call(t, url, version, "completion/complete", ref); a.Error == nil || a.Error.Code != -32601 {
			t.Errorf("completion/complete at %s: %+v, want method not found (-32601)", version, a.Error)
		}
	}
	if status, a := call(t, url, "2025-11-25", "logging/setLevel", map[string]any{"level": "info"}); status != http.StatusOK || a.Error != nil {
		t.Errorf("logging/setLevel at 2025-11-25: HTTP %d, error %+v", status, a.Error)
	}
}
