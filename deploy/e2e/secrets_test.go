package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestNoKeyInLogs runs the identity flows, including mistakes a careless client makes (a key in
// a path, a key as a hash, a rotated key reused), and then searches everything the suite logged
// for every key it issued.
func TestNoKeyInLogs(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Secretive"})
	peer, peerKey := env.CreateObject(t, nil)
	issued := []string{key, peerKey}

	sub := env.Do(t, "POST", "/api/objects/"+hash+"/keys", key, map[string]any{"scopes": []string{"read"}}).Expect(t, 201).JSON(t)
	issued = append(issued, Str(t, sub, "key"))
	env.Do(t, "GET", "/api/objects/"+hash+"/svc-associations", Str(t, sub, "key"), nil).Expect(t, 200)
	env.Do(t, "POST", "/api/objects/"+hash+"/svc-associations", Str(t, sub, "key"), map[string]any{"peer_hash": peer}).ExpectError(t, 403, "INSUFFICIENT_SCOPE")
	env.Do(t, "GET", "/api/objects/"+hash+"/svc-associations", peerKey, nil).ExpectError(t, 403, "FORBIDDEN")
	env.Do(t, "GET", "/api/objects/"+key, "", nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "GET", "/api/objects/"+hash+"/"+key, key, nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "POST", "/api/objects/"+hash+"/svc-associations", key, map[string]any{"peer_hash": key}).ExpectError(t, 400, "INVALID_REQUEST")
	rotated := env.Do(t, "POST", "/api/objects/"+hash+"/rotate-key", key, nil).Expect(t, 200).JSON(t)
	issued = append(issued, Str(t, rotated, "api_key"))
	time.Sleep(time.Second)
	env.Do(t, "GET", "/api/objects/"+hash+"/svc-associations", key, nil).ExpectError(t, 401, "UNAUTHORIZED")
	env.Do(t, "POST", "/api/objects/claim-custom-hash", Str(t, rotated, "api_key"), map[string]any{"username": "secretive"}).ExpectError(t, 402, "PAYMENT_REQUIRED")
	// A key pasted into the request-id header is neither echoed nor logged: the id is replaced.
	for _, k := range []string{Str(t, rotated, "api_key"), Str(t, sub, "key")} {
		resp := env.Send(t, Request{Method: "GET", Path: "/api/whoami", Key: Str(t, rotated, "api_key"), Headers: map[string]string{"X-Request-Id": k}})
		if got := resp.Header.Get("X-Request-Id"); got == k || !strings.HasPrefix(got, "req_") {
			t.Errorf("a key sent as X-Request-Id came back as %q, want a fresh id", got)
		}
	}

	logs := env.Logs()
	if !strings.Contains(logs, `"status":401`) || !strings.Contains(logs, "http request") {
		t.Fatal("the suite's logs were not captured")
	}
	for _, k := range issued {
		if strings.Contains(logs, k) {
			t.Errorf("an issued key appears in the logs")
		}
		if strings.Contains(logs, k[len(k)-20:]) {
			t.Errorf("part of an issued key appears in the logs")
		}
	}
}

// TestEveryDocumentedRouteIsServed calls every operation of openapi.json as its owner and checks
// that a service answers it (no route-level 404 or 405), so the document lists nothing the suite
// does not serve.
func TestEveryDocumentedRouteIsServed(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, nil)
	paths := env.spec.Doc["paths"].(map[string]any)
	if len(paths) == 0 {
		t.Fatal("openapi.json has no paths")
	}
	for tpl, ops := range paths {
		for method := range ops.(map[string]any) {
			path := strings.ReplaceAll(tpl, "{hash}", hash)
			for strings.Contains(path, "{") {
				i, j := strings.Index(path, "{"), strings.Index(path, "}")
				path = path[:i] + "x_unknown" + path[j+1:]
			}
			if strings.HasSuffix(tpl, "/rotate-key") {
				continue // rotating would invalidate the key the other calls use; see TestRotateKey
			}
			var body any
			if method != "get" && method != "delete" {
				body = map[string]any{}
			}
			if isStream(ops.(map[string]any)[method]) {
				// An event stream never ends: its status is the answer.
				if status := streamStatus(t, env, path, key); status != http.StatusOK {
					t.Errorf("stream %s answered %d", tpl, status)
				}
				continue
			}
			resp := env.send(t, Request{Method: strings.ToUpper(method), Path: path, Key: key, Body: body})
			if resp.Status == http.StatusMethodNotAllowed || (resp.Status == http.StatusNotFound && strings.Contains(string(resp.Body), "route not found")) {
				t.Errorf("%s %s is documented but not served: %d %s", strings.ToUpper(method), tpl, resp.Status, resp.Body)
			}
		}
	}
}

// isStream reports whether an operation answers an event stream.
func isStream(op any) bool {
	ok, _ := op.(map[string]any)["responses"].(map[string]any)["200"].(map[string]any)
	content, _ := ok["content"].(map[string]any)
	_, stream := content["text/event-stream"]
	return stream
}

// streamStatus opens an event stream and returns its status, closing it at once.
func streamStatus(t testing.TB, env *Env, path, key string) int {
	t.Helper()
	req, err := http.NewRequest("GET", env.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestNoSecretInLogsOverMCP runs the MCP flows with every kind of key (owner, sub-key, bad,
// revoked) and private guidance, then searches everything the suite logged for the keys and the
// guidance: /mcp logs what REST logs (the path, never a header or a body), and each tool call's
// route call is logged as that route.
func TestNoSecretInLogsOverMCP(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, key := env.CreateObject(t, nil)
	bob, _ := env.CreateObject(t, nil)
	sub := env.Do(t, "POST", "/api/objects/"+alice+"/keys", key, map[string]any{"scopes": []string{"read", "write", "mailbox"}}).Expect(t, 201).JSON(t)
	subKey := Str(t, sub, "key")
	marker := "guidance-marker-mcp-" + strings.Repeat("q", 12)

	s := mcpSession(t, env, subKey)
	threadID := Str(t, toolOK(t, s, "send_message", map[string]any{"to_hash": bob, "kind": "note", "body": "hello"}), "thread_id")
	toolOK(t, s, "set_private_guidance", map[string]any{"thread_id": threadID, "body": "Never say Friday. " + marker})
	toolOK(t, s, "read_private_guidance", map[string]any{"thread_id": threadID})
	toolRefusal(t, s, "set_private_guidance", map[string]any{"thread_id": threadID, "body": marker, "note": marker})
	toolRefusal(t, s, "update_profile", map[string]any{"hash": bob, "body": marker})
	toolOK(t, mcpSession(t, env, key), "whoami", nil)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
	headers := map[string]string{"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
	bad := "svc_sk_" + strings.Repeat("B", 40)
	if r := env.send(t, Request{Method: "POST", Path: "/mcp", Key: bad, Body: call, Headers: headers}); r.Status != 401 {
		t.Fatalf("a bad key at /mcp: %d", r.Status)
	}
	env.Do(t, "DELETE", "/api/objects/"+alice+"/keys/"+Str(t, sub, "id"), key, nil).Expect(t, 200)
	env.Eventually(t, func() bool {
		return env.send(t, Request{Method: "POST", Path: "/mcp", Key: subKey, Body: call, Headers: headers}).Status == 401
	}, "the revoked key refused at /mcp")

	logs := env.Logs()
	if !strings.Contains(logs, `"path":"/mcp"`) || !strings.Contains(logs, `"route":"/api/threads/:threadId/private-guidance"`) {
		t.Fatal("the suite's logs hold neither the /mcp requests nor their route calls")
	}
	for _, secret := range []string{key, subKey, bad, marker} {
		if strings.Contains(logs, secret) || strings.Contains(logs, secret[len(secret)-16:]) {
			t.Errorf("a key or the guidance appears in the logs: %.12s…", secret)
		}
	}
}
