package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// mcpMaxResultBytes is the gateway's bound on one route answer a tool returns
// (mcpMaxResultBytes).
const mcpMaxResultBytes = 512 << 10

// postMCP sends one raw POST to /mcp, as a client that speaks JSON-RPC by hand would.
func postMCP(t testing.TB, env *Env, key, version string, body []byte) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", env.URL+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// TestMCPRefusesBatches: a JSON-RPC batch is refused before any call runs, whatever protocol
// version the client names (or none, as clients of the 2025-03-26 revision send), so that one
// anonymous request cannot carry many calls and their answers.
func TestMCPRefusesBatches(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, _ := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Ada"})
	var calls []string
	for i := range 50 {
		calls = append(calls, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read_profile","arguments":{"hash":%q}}}`, i+1, hash))
	}
	batch := []byte("  [" + strings.Join(calls, ",") + "]")
	for _, version := range []string{"", "2025-03-26", "2025-06-18", "2025-11-25"} {
		status, body := postMCP(t, env, "", version, batch)
		if status != 400 || !strings.Contains(string(body), `"INVALID_REQUEST"`) || strings.Contains(string(body), "# Ada") {
			t.Errorf("a batch of 50 calls with protocol version %q = %d %.300s, want 400 INVALID_REQUEST and no result", version, status, body)
		}
	}
	// One call per request still works, anonymously.
	status, body := postMCP(t, env, "", "2025-11-25", []byte(calls[0]))
	if status != 200 || !strings.Contains(string(body), "# Ada") {
		t.Errorf("one read_profile call = %d %.300s", status, body)
	}
}

// TestMCPAnswersAreCapped: a tool whose route answers more than MaxResultBytes is refused with 413
// PAYLOAD_TOO_LARGE naming the way out (a smaller limit), and the /mcp answer stays small; the
// same call with a small limit is served.
func TestMCPAnswersAreCapped(t *testing.T) {
	t.Parallel()
	env := Start(t)
	from, fromKey := env.CreateObject(t, nil)
	to, toKey := env.CreateObject(t, nil)
	big := strings.Repeat("x", 60<<10)
	first := env.Do(t, "POST", "/api/messages", fromKey, map[string]any{"from_hash": from, "to_hash": to, "kind": "note", "body": big}).Expect(t, 201).JSON(t)
	thread := Str(t, first, "thread_id")
	n := mcpMaxResultBytes/len(big) + 2
	for range n - 1 {
		env.Do(t, "POST", "/api/messages", fromKey, map[string]any{"from_hash": from, "to_hash": to, "kind": "note", "thread_id": thread, "body": big}).Expect(t, 201)
	}
	call := func(limit int) (int, []byte) {
		return postMCP(t, env, toKey, "2025-11-25", []byte(fmt.Sprintf(
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_thread","arguments":{"thread_id":%q,"limit":%d}}}`, thread, limit)))
	}
	var status int
	var body []byte
	env.Eventually(t, func() bool {
		status, body = call(n)
		return strings.Contains(string(body), "PAYLOAD_TOO_LARGE")
	}, fmt.Sprintf("read_thread of %d messages of 60 KiB refused as too large", n))
	var res struct {
		Result struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &res); err != nil || status != 200 || !res.Result.IsError ||
		!strings.Contains(string(body), `\"status\":413`) || !strings.Contains(string(body), "limit") || len(body) > 64<<10 {
		t.Errorf("read_thread of %d messages = %d, %d bytes %.300s; want a 413 tool error that names the limit", n, status, len(body), body)
	}
	status, body = call(2)
	if status != 200 || bytes.Contains(body, []byte(`"isError":true`)) || !bytes.Contains(body, []byte(big[:100])) {
		t.Errorf("read_thread with limit 2 = %d %.300s", status, body)
	}
	if len(body) > 3*mcpMaxResultBytes {
		t.Errorf("one /mcp answer is %d bytes, over three times MaxResultBytes", len(body))
	}
}

// TestMCPPathArgumentsStayInTheirRoute: a path argument is one path segment: "<hash>/mailbox"
// does not reach the mailbox route, nor "../" another route.
func TestMCPPathArgumentsStayInTheirRoute(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, nil)
	for _, arg := range []string{hash + "/mailbox", hash + "/events", "../objects/" + hash + "/mailbox", hash + "%2Fmailbox", hash + "?x=1"} {
		status, body := postMCP(t, env, key, "2025-11-25", []byte(fmt.Sprintf(
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_object","arguments":{"hash":%q}}}`, arg)))
		if status != 200 || !bytes.Contains(body, []byte(`"isError":true`)) || bytes.Contains(body, []byte(`"threads"`)) {
			t.Errorf("get_object with hash %q = %d %.300s, want a refused argument", arg, status, body)
		}
	}
}
