package oauth

import (
	"context"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/svcdev/svc/pkg/outbound"
)

func TestCheckClientID(t *testing.T) {
	t.Parallel()
	for id, ok := range map[string]bool{
		"https://app.example/oauth/client.json": true,
		"https://app.example:8443/c":            true,
		"http://app.example/oauth/client.json":  false,
		"https://app.example":                   false,
		"https://app.example/":                  false,
		"https://app.example/c#frag":            false,
		"https://user:pw@app.example/c":         false,
		"https://app.example/a/../c":            false,
		"https://app.example/./c":               false,
		"app.example/c":                         false,
		"":                                      false,
		"https://app.example/c?x=1":             true,
	} {
		if err := checkClientID(id); (err == nil) != ok {
			t.Errorf("checkClientID(%q) = %v, want ok %v", id, err, ok)
		}
	}
}

func TestParseScope(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string][]string{
		"":                   {"read", "write"},
		"read":               {"read"},
		"read read  mailbox": {"read", "mailbox"},
		"write read":         {"write", "read"},
		"read admin":         nil,
		"openid":             nil,
	} {
		got, ok := parseScope(raw)
		if (want == nil) == ok || !slices.Equal(got, want) {
			t.Errorf("parseScope(%q) = %v %v, want %v", raw, got, ok, want)
		}
	}
}

func testServer(t *testing.T, issuer string, seed byte) *Server {
	t.Helper()
	s := &Server{issuer: issuer, resource: issuer + "/mcp"}
	key := make([]byte, 32)
	key[0] = seed
	srv, err := New(Options{Issuer: issuer, Engine: http.NewServeMux(), Auth: nil, SigningSeed: key})
	if err == nil || srv != nil {
		t.Fatal("New accepted missing dependencies")
	}
	s.key = newKey(key)
	return s
}

func TestAccessTokens(t *testing.T) {
	t.Parallel()
	s := testServer(t, "https://svc.example", 1)
	g := &grant{ObjectID: "obj", KeyID: "key_1", Digest: "d1", ClientID: "https://app.example/c", Scopes: []string{"read"}}
	tok, err := s.mint(g, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if digest, keyID, err := s.Verify(tok, "https://svc.example/mcp"); err != nil || digest != "d1" || keyID != "key_1" {
		t.Fatalf("Verify = %q %q %v, want the grant's key", digest, keyID, err)
	}
	if _, _, err := s.Verify(tok, "https://svc.example/other"); err == nil {
		t.Error("a token was accepted for another resource")
	}
	if _, _, err := testServer(t, "https://svc.example", 2).Verify(tok, "https://svc.example/mcp"); err == nil {
		t.Error("a token signed with another key was accepted")
	}
	if _, _, err := testServer(t, "https://other.example", 1).Verify(tok, "https://other.example/mcp"); err == nil {
		t.Error("a token of another issuer was accepted")
	}
	old, _ := s.mint(g, time.Now().Add(-2*AccessTTL))
	if _, _, err := s.Verify(old, "https://svc.example/mcp"); err == nil {
		t.Error("an expired token was accepted")
	}
	if _, _, err := s.Verify(tok[:len(tok)-3]+"AAA", "https://svc.example/mcp"); err == nil {
		t.Error("a tampered token was accepted")
	}
}

// TestClientDocuments fetches metadata documents as the authorization request does: the
// document must name itself, list redirect URIs, stay under the size cap, and is cached.
func TestClientDocuments(t *testing.T) {
	t.Parallel()
	fetches := 0
	var base string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches++
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/good":
			_, _ = w.Write([]byte(`{"client_id":"` + base + `/good","client_name":"Good","redirect_uris":["http://127.0.0.1/cb"]}`))
		case "/other":
			_, _ = w.Write([]byte(`{"client_id":"https://elsewhere.example/c","redirect_uris":["http://127.0.0.1/cb"]}`))
		case "/secret":
			_, _ = w.Write([]byte(`{"client_id":"` + base + `/secret","redirect_uris":["http://127.0.0.1/cb"],"token_endpoint_auth_method":"client_secret_basic"}`))
		case "/big":
			_, _ = w.Write([]byte(`{"client_id":"` + base + `/big","redirect_uris":["` + strings.Repeat("x", MaxClientDocumentBytes) + `"]}`))
		case "/moved":
			http.Redirect(w, r, "/good", http.StatusFound)
		}
	}))
	defer srv.Close()
	base = srv.URL
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	fetch, err := outbound.New(outbound.Options{AllowPrivate: true, CAFile: ca, HTTPSOnly: true, MaxBytes: MaxClientDocumentBytes, MaxRedirects: -1})
	if err != nil {
		t.Fatal(err)
	}
	c := newClients(fetch)
	ctx := context.Background()
	cl, err := c.get(ctx, base+"/good")
	if err != nil || cl.Name != "Good" || !cl.AllowsRedirect("http://127.0.0.1/cb") || cl.AllowsRedirect("http://127.0.0.1/cb/") || cl.Origin() != base {
		t.Fatalf("get /good = %+v %v", cl, err)
	}
	if _, err := c.get(ctx, base+"/good"); err != nil || fetches != 1 {
		t.Errorf("a second get fetched again (%d fetches, %v)", fetches, err)
	}
	for _, path := range []string{"/other", "/secret", "/big", "/moved", "/missing"} {
		if _, err := c.get(ctx, base+path); err == nil {
			t.Errorf("get %s was accepted", path)
		}
	}
	guarded, err := outbound.New(outbound.Options{CAFile: ca, HTTPSOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newClients(guarded).get(ctx, base+"/good"); err == nil {
		t.Error("a document on loopback was fetched without OUTBOUND_ALLOW_PRIVATE")
	}
}

func TestLabel(t *testing.T) {
	t.Parallel()
	if got := label(&Client{ID: "https://app.example/c", Name: "Desk"}); got != "Desk (https://app.example)" {
		t.Errorf("label = %q", got)
	}
	long := label(&Client{ID: "https://app.example/c", Name: strings.Repeat("é", 300)})
	if n := len([]rune(long)); n != maxLabel || !utf8.ValidString(long) {
		t.Errorf("a long label has %d characters (valid UTF-8: %v), want %d", n, utf8.ValidString(long), maxLabel)
	}
}
