package e2e

import (
	"encoding/json"
	"golang.org/x/oauth2"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// oauthApp is a third-party MCP client as the authorization server sees it: its Client ID
// Metadata Document served over https on loopback (trusted through OUTBOUND_CA_FILE).
type oauthApp struct {
	srv      *httptest.Server
	id       string
	redirect string
	name     string
}

func newOAuthApp(t *testing.T, name string) *oauthApp {
	t.Helper()
	return newOAuthAppRedirecting(t, name, "")
}

// newOAuthAppRedirecting is newOAuthApp with the redirect URI redirect ("": a path of the
// document's own server).
func newOAuthAppRedirecting(t *testing.T, name, redirect string) *oauthApp {
	t.Helper()
	a := &oauthApp{name: name}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /client.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": a.id, "client_name": a.name, "redirect_uris": []string{a.redirect},
			"token_endpoint_auth_method": "none", "grant_types": []string{"authorization_code", "refresh_token"}})
	})
	a.srv = httptest.NewTLSServer(mux)
	t.Cleanup(a.srv.Close)
	a.id, a.redirect = a.srv.URL+"/client.json", a.srv.URL+"/callback"
	if redirect != "" {
		a.redirect = redirect
	}
	return a
}

// startOAuth starts a suite whose gateway may fetch app's document.
func startOAuth(t *testing.T, app *oauthApp, opts ...Option) *Env {
	t.Helper()
	return Start(t, append([]Option{WithEnv(allowPrivate, "true"), WithEnv("OUTBOUND_CA_FILE", caFileOf(t, app.srv))}, opts...)...)
}

// noRedirects does not follow redirects: the flow reads the Location the server answers.
var noRedirects = &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

type page struct {
	status   int
	header   http.Header
	body     string
	location *url.URL
}

func (p *page) field(t *testing.T, name string) string {
	t.Helper()
	m := regexp.MustCompile(`name="` + name + `" value="([^"]*)"`).FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("the page has no %s field: %d %s", name, p.status, p.body)
	}
	return m[1]
}

func visit(t *testing.T, method, target string, form url.Values) *page {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	p := &page{status: res.StatusCode, header: res.Header, body: string(raw)}
	if loc := res.Header.Get("Location"); loc != "" {
		if p.location, err = url.Parse(loc); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// authorizeURL is the authorization request of app for scope, with the challenge of verifier.
func authorizeURL(env *Env, app *oauthApp, scope, verifier, redirect string) string {
	q := url.Values{"response_type": {"code"}, "client_id": {app.id}, "redirect_uri": {redirect}, "state": {"st-1"},
		"code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)}, "code_challenge_method": {"S256"},
		"scope": {scope}, "resource": {env.URL + "/mcp"}}
	return env.URL + "/oauth/authorize?" + q.Encode()
}

// consentWith walks the consent page with key and allows; it returns the redirect's query.
func consentWith(t *testing.T, env *Env, app *oauthApp, scope, verifier, key, wantHash string) url.Values {
	t.Helper()
	first := visit(t, "GET", authorizeURL(env, app, scope, verifier, app.redirect), nil)
	if first.status != 200 || !strings.Contains(first.body, app.name) || !strings.Contains(first.body, app.srv.URL) {
		t.Fatalf("consent page: %d, want 200 naming the client and its origin: %s", first.status, first.body)
	}
	for _, h := range []string{"Set-Cookie"} {
		if first.header.Get(h) != "" {
			t.Errorf("the consent page sets %s", h)
		}
	}
	req, csrf := first.field(t, "request"), first.field(t, "csrf")
	forged := visit(t, "POST", env.URL+"/oauth/authorize", url.Values{"request": {req}, "csrf": {"forged"}, "action": {"identify"}, "key": {key}})
	if forged.status != 403 {
		t.Errorf("a post with another CSRF token answered %d, want 403", forged.status)
	}
	second := visit(t, "POST", env.URL+"/oauth/authorize", url.Values{"request": {req}, "csrf": {csrf}, "action": {"identify"}, "key": {key}})
	if second.status != 200 || !strings.Contains(second.body, wantHash) || strings.Contains(second.body, key) {
		t.Fatalf("identify: %d, want 200 showing the box %s and not the key: %s", second.status, wantHash, second.body)
	}
	done := visit(t, "POST", env.URL+"/oauth/authorize", url.Values{"request": {req}, "csrf": {csrf}, "action": {"allow"}})
	if done.status != 303 || done.location == nil || !strings.HasPrefix(done.location.String(), app.redirect+"?") {
		t.Fatalf("allow: %d %v, want 303 to the redirect URI", done.status, done.location)
	}
	q := done.location.Query()
	if q.Get("state") != "st-1" || q.Get("iss") != env.URL || q.Get("code") == "" {
		t.Fatalf("the redirect carries %v, want code, state st-1 and iss %s", q, env.URL)
	}
	return q
}

// tokenCall posts form to the token endpoint.
func tokenCall(t *testing.T, env *Env, form url.Values) (int, map[string]any) {
	t.Helper()
	p := visit(t, "POST", env.URL+"/oauth/token", form)
	var out map[string]any
	if err := json.Unmarshal([]byte(p.body), &out); err != nil {
		t.Fatalf("token endpoint: %d %s is not JSON", p.status, p.body)
	}
	if p.header.Get("Cache-Control") != "no-store" {
		t.Errorf("token endpoint Cache-Control = %q, want no-store", p.header.Get("Cache-Control"))
	}
	return p.status, out
}

func redeem(t *testing.T, env *Env, app *oauthApp, code, verifier string) (int, map[string]any) {
	return tokenCall(t, env, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier},
		"client_id": {app.id}, "redirect_uri": {app.redirect}, "resource": {env.URL + "/mcp"}})
}

func newVerifier() string { return oauth2.GenerateVerifier() }

// mcpCall posts one JSON-RPC tools/call to /mcp with token.
func mcpCall(t *testing.T, env *Env, token, tool string, args map[string]any) *Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	return env.send(t, Request{Method: "POST", Path: "/mcp", Key: token, Body: string(body), Headers: map[string]string{
		"Accept": "application/json, text/event-stream", "Content-Type": "application/json", "MCP-Protocol-Version": "2025-11-25"}})
}

// mcpStatusAt posts a whoami tools/call to the /mcp of the gateway replica at gw and returns the
// status and WWW-Authenticate.
func mcpStatusAt(t *testing.T, gw, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", gw+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	res, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	return res.StatusCode, res.Header.Get("WWW-Authenticate")
}

// TestOAuthDiscovery reads the metadata a client starts from.
func TestOAuthDiscovery(t *testing.T) {
	t.Parallel()
	env := Start(t)
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		prm := env.send(t, Request{Method: "GET", Path: path}).Expect(t, 200).JSON(t)
		if servers, _ := prm["authorization_servers"].([]any); len(servers) != 1 || servers[0] != env.URL || prm["resource"] != env.URL+"/mcp" {
			t.Errorf("%s = %v, want resource %s/mcp and the issuer %s", path, prm, env.URL, env.URL)
		}
	}
	as := env.send(t, Request{Method: "GET", Path: "/.well-known/oauth-authorization-server"}).Expect(t, 200).JSON(t)
	if as["issuer"] != env.URL || as["authorization_endpoint"] != env.URL+"/oauth/authorize" || as["token_endpoint"] != env.URL+"/oauth/token" ||
		as["client_id_metadata_document_supported"] != true || as["authorization_response_iss_parameter_supported"] != true {
		t.Errorf("authorization server metadata = %v", as)
	}
	pre := env.send(t, Request{Method: "OPTIONS", Path: "/oauth/token", Headers: map[string]string{"Origin": "https://app.example",
		"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}})
	if pre.Status != 204 || pre.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("a preflight of the token endpoint: %d %v, want 204 for any origin", pre.Status, pre.Header)
	}
	if m, _ := as["code_challenge_methods_supported"].([]any); len(m) != 1 || m[0] != "S256" {
		t.Errorf("code_challenge_methods_supported = %v, want S256 only", as["code_challenge_methods_supported"])
	}
	if s, _ := as["scopes_supported"].([]any); len(s) != 3 {
		t.Errorf("scopes_supported = %v, want read, write, mailbox", as["scopes_supported"])
	}
	resp := mcpCall(t, env, "", "whoami", nil)
	if auth := resp.Header.Get("WWW-Authenticate"); resp.Status != 401 || !strings.Contains(auth, `resource_metadata="`+env.URL+`/.well-known/oauth-protected-resource/mcp"`) ||
		!strings.Contains(auth, `scope="read write mailbox"`) {
		t.Errorf("whoami without a token: %d %q, want 401 naming the metadata and the scopes", resp.Status, auth)
	}
}

// TestOAuthCodeFlow runs a grant from the consent page to its revocation: the grant is a sub-key
// listed with the client's name, its token calls tools through the routes, refresh tokens
// rotate, and deleting the sub-key refuses the next call on each of two gateway replicas.
func TestOAuthCodeFlow(t *testing.T) {
	t.Parallel()
	app := newOAuthApp(t, "Agent Desk")
	env := startOAuth(t, app, WithReplicas("gateway", 2))
	gateways := env.Stack.GatewayURLs
	hash, key := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Oauth Box"})
	peer, _ := env.CreateObject(t, nil)

	verifier := newVerifier()
	q := consentWith(t, env, app, "read write", verifier, key, hash)
	if st, out := redeem(t, env, app, q.Get("code"), verifier); st != 200 || out["token_type"] != "Bearer" || out["scope"] != "read write" {
		t.Fatalf("code exchange: %d %v", st, out)
	} else {
		issued := []string{q.Get("code"), out["access_token"].(string), out["refresh_token"].(string)}
		if st, again := redeem(t, env, app, q.Get("code"), verifier); st != 400 || again["error"] != "invalid_grant" {
			t.Errorf("a code redeemed twice: %d %v, want 400 invalid_grant", st, again)
		}
		access := out["access_token"].(string)
		s := mcpSession(t, env, access)
		who := toolOK(t, s, "whoami", nil)
		if who["hash"] != hash || who["owner_key"] != false {
			t.Errorf("whoami with the access token = %v, want the box's sub-key", who)
		}
		sent := toolOK(t, s, "send_message", map[string]any{"to_hash": peer, "kind": "question", "body": "Hello over OAuth"})
		if sent["from_hash"] != hash {
			t.Errorf("send_message = %v, want it from %s", sent, hash)
		}
		// The token is for /mcp: a REST route called with it directly refuses it.
		env.Do(t, "GET", "/api/whoami", access, nil).ExpectError(t, 401, "UNAUTHORIZED")

		keys := env.Do(t, "GET", "/api/objects/"+hash+"/keys", key, nil).Expect(t, 200).JSON(t)["keys"].([]any)
		var grantKey map[string]any
		for _, k := range keys {
			if m := k.(map[string]any); strings.Contains(m["label"].(string), "Agent Desk") {
				grantKey = m
			}
		}
		if grantKey == nil {
			t.Fatalf("the grant is not among the keys: %v", keys)
		}
		if sc, _ := grantKey["scopes"].([]any); len(sc) != 2 || grantKey["key"] != nil || !strings.Contains(grantKey["label"].(string), app.srv.URL) {
			t.Errorf("the grant's key = %v, want scopes read and write, the client's origin, no key", grantKey)
		}
		if used, _ := grantKey["last_used_at"].(string); used == "" {
			t.Errorf("the grant's key has no last_used_at after its token was issued and used: %v", grantKey)
		}

		st, rotated := tokenCall(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {out["refresh_token"].(string)}, "client_id": {app.id}})
		if st != 200 || rotated["refresh_token"] == out["refresh_token"] {
			t.Fatalf("refresh: %d %v, want a new pair", st, rotated)
		}
		issued = append(issued, rotated["access_token"].(string), rotated["refresh_token"].(string))
		mcpCall(t, env, rotated["access_token"].(string), "whoami", nil).Expect(t, 200)

		// Each replica holds the grant in its in-process cache; the first call after the
		// revocation's answer is refused on both.
		for _, gw := range gateways {
			if st, _ := mcpStatusAt(t, gw, access); st != 200 {
				t.Fatalf("the grant's token on %s: %d, want 200", gw, st)
			}
		}
		env.Do(t, "DELETE", "/api/objects/"+hash+"/keys/"+grantKey["id"].(string), key, nil).Expect(t, 200)
		for _, gw := range gateways {
			for _, tok := range []string{access, rotated["access_token"].(string)} {
				if st, challenge := mcpStatusAt(t, gw, tok); st != 401 || !strings.Contains(challenge, `error="invalid_token"`) {
					t.Errorf("a revoked grant's token on %s: %d %q, want 401 invalid_token", gw, st, challenge)
				}
			}
		}
		if st, refused := tokenCall(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rotated["refresh_token"].(string)}, "client_id": {app.id}}); st != 400 || refused["error"] != "invalid_grant" {
			t.Errorf("a revoked grant's refresh: %d %v, want 400 invalid_grant", st, refused)
		}

		logs := env.Logs()
		for _, secret := range append(issued, key) {
			if strings.Contains(logs, secret) {
				t.Errorf("an issued code or token appears in the logs")
			}
		}
	}
}

// TestOAuthRefusals covers what a client or an attacker gets wrong: a redirect URI the client
// does not list, a wrong PKCE verifier, a read grant calling a write tool, a key lacking the
// scopes asked for.
func TestOAuthRefusals(t *testing.T) {
	t.Parallel()
	app := newOAuthApp(t, "Careful Client")
	env := startOAuth(t, app)
	hash, key := env.CreateObject(t, nil)
	peer, _ := env.CreateObject(t, nil)

	// A redirect URI the document does not list is answered on a page, never followed.
	bad := visit(t, "GET", authorizeURL(env, app, "read", newVerifier(), app.redirect+"/elsewhere"), nil)
	if bad.status != 400 || bad.location != nil {
		t.Errorf("an unlisted redirect_uri: %d to %v, want 400 with no redirect", bad.status, bad.location)
	}
	// plain PKCE goes back to the client as invalid_request.
	plain := strings.Replace(authorizeURL(env, app, "read", newVerifier(), app.redirect), "code_challenge_method=S256", "code_challenge_method=plain", 1)
	if p := visit(t, "GET", plain, nil); p.status != 302 || p.location.Query().Get("error") != "invalid_request" || p.location.Query().Get("iss") != env.URL {
		t.Errorf("plain PKCE: %d %v, want a redirect with invalid_request and iss", p.status, p.location)
	}

	verifier := newVerifier()
	q := consentWith(t, env, app, "read", verifier, key, hash)
	if st, out := redeem(t, env, app, q.Get("code"), newVerifier()); st != 400 || out["error"] != "invalid_grant" {
		t.Errorf("a wrong code_verifier: %d %v, want 400 invalid_grant", st, out)
	}
	q = consentWith(t, env, app, "read", verifier, key, hash)
	if st, out := tokenCall(t, env, url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "code_verifier": {verifier},
		"client_id": {app.id}, "redirect_uri": {app.redirect + "/other"}}); st != 400 || out["error"] != "invalid_grant" {
		t.Errorf("a redirect_uri mismatch at the token endpoint: %d %v, want 400 invalid_grant", st, out)
	}
	q = consentWith(t, env, app, "read", verifier, key, hash)
	st, out := redeem(t, env, app, q.Get("code"), verifier)
	if st != 200 {
		t.Fatalf("code exchange: %d %v", st, out)
	}
	read := out["access_token"].(string)
	mcpCall(t, env, read, "whoami", nil).Expect(t, 200)
	resp := mcpCall(t, env, read, "send_message", map[string]any{"to_hash": peer, "kind": "question", "body": "Not allowed"})
	if auth := resp.Header.Get("WWW-Authenticate"); resp.Status != 403 || !strings.Contains(auth, `error="insufficient_scope"`) || !strings.Contains(auth, `scope="write"`) {
		t.Errorf("a read grant calling send_message: %d %q %s, want 403 insufficient_scope naming write", resp.Status, auth, resp.Body)
	}

	// A sub-key that lacks a scope asked for cannot approve it.
	sub := env.Do(t, "POST", "/api/objects/"+hash+"/keys", key, map[string]any{"label": "reader", "scopes": []string{"read"}}).Expect(t, 201).JSON(t)
	first := visit(t, "GET", authorizeURL(env, app, "read write", verifier, app.redirect), nil)
	p := visit(t, "POST", env.URL+"/oauth/authorize", url.Values{"request": {first.field(t, "request")}, "csrf": {first.field(t, "csrf")},
		"action": {"identify"}, "key": {Str(t, sub, "key")}})
	if p.status != 403 || !strings.Contains(p.body, "write") {
		t.Errorf("a read sub-key approving read write: %d, want 403 naming write", p.status)
	}
	// A sub-key that holds the scopes may approve, but not once it is revoked before Allow.
	both := env.Do(t, "POST", "/api/objects/"+hash+"/keys", key, map[string]any{"label": "both", "scopes": []string{"read", "write"}}).Expect(t, 201).JSON(t)
	first = visit(t, "GET", authorizeURL(env, app, "read write", verifier, app.redirect), nil)
	form := url.Values{"request": {first.field(t, "request")}, "csrf": {first.field(t, "csrf")}}
	identify := url.Values{"action": {"identify"}, "key": {Str(t, both, "key")}}
	for k, v := range form {
		identify[k] = v
	}
	if p := visit(t, "POST", env.URL+"/oauth/authorize", identify); p.status != 200 || !strings.Contains(p.body, hash) {
		t.Fatalf("a read write sub-key approving read write: %d", p.status)
	}
	env.Do(t, "DELETE", "/api/objects/"+hash+"/keys/"+Str(t, both, "id"), key, nil).Expect(t, 200)
	form.Set("action", "allow")
	if p := visit(t, "POST", env.URL+"/oauth/authorize", form); p.status != 400 || p.location != nil {
		t.Errorf("allow after the approving key's revocation: %d %v, want 400 and no code", p.status, p.location)
	}

	// A tampered token is refused.
	if r := mcpCall(t, env, read[:len(read)-4]+"AAAA", "whoami", nil); r.Status != 401 {
		t.Errorf("a tampered token: %d, want 401", r.Status)
	}
	// A refresh token used twice was stolen: its reuse ends the grant, for the thief and the
	// client alike.
	refresh := func(tok string) (int, map[string]any) {
		return tokenCall(t, env, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok}, "client_id": {app.id}})
	}
	st, rotated := refresh(out["refresh_token"].(string))
	if st != 200 {
		t.Fatalf("refresh: %d %v", st, rotated)
	}
	if st, reused := refresh(out["refresh_token"].(string)); st != 400 || reused["error"] != "invalid_grant" {
		t.Errorf("a rotated-away refresh token: %d %v, want 400 invalid_grant", st, reused)
	}
	if r := mcpCall(t, env, rotated["access_token"].(string), "whoami", nil); r.Status != 401 {
		t.Errorf("the newest token after a refresh token's reuse: %d, want 401", r.Status)
	}
	if st, after := refresh(rotated["refresh_token"].(string)); st != 400 || after["error"] != "invalid_grant" {
		t.Errorf("the newest refresh token after a reuse: %d %v, want 400 invalid_grant", st, after)
	}
	if !strings.Contains(env.Logs(), "oauth refresh token reused: grant revoked") {
		t.Error("the reuse was not logged")
	}
}
