package e2e

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestOAuthGoSDKClient connects the official Go SDK's client to /mcp with nothing but the server
// URL and its own OAuth handler (Client ID Metadata Document, PKCE, RFC 9207 iss check); the
// person's consent step is the fetcher. Asked for read only, the client is stepped up by the
// 403 insufficient_scope of send_message, asks the owner again and sends.
func TestOAuthGoSDKClient(t *testing.T) {
	t.Parallel()
	app := newOAuthApp(t, "Go SDK client")
	env := startOAuth(t, app)
	hash, key := env.CreateObject(t, nil)
	peer, _ := env.CreateObject(t, nil)

	var asked []string
	fetcher := func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
		u, err := url.Parse(args.URL)
		if err != nil {
			return nil, err
		}
		asked = append(asked, u.Query().Get("scope"))
		first := visit(t, "GET", args.URL, nil)
		form := url.Values{"request": {first.field(t, "request")}, "csrf": {first.field(t, "csrf")}, "action": {"identify"}, "key": {key}}
		if p := visit(t, "POST", env.URL+"/oauth/authorize", form); p.status != 200 {
			t.Fatalf("identify: %d %s", p.status, p.body)
		}
		form.Set("action", "allow")
		form.Del("key")
		done := visit(t, "POST", env.URL+"/oauth/authorize", form)
		if done.location == nil {
			t.Fatalf("allow: %d %s", done.status, done.body)
		}
		q := done.location.Query()
		return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
	}
	handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		ClientIDMetadataDocumentConfig: &auth.ClientIDMetadataDocumentConfig{URL: app.id},
		RedirectURL:                    app.redirect,
		AuthorizationCodeFetcher:       fetcher,
		// The first authorization asks for read only; the step-up asks for what the challenge names.
		ScopeFilter: func(discovered []string) []string {
			if len(asked) == 0 {
				return []string{"read"}
			}
			return discovered
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "svc-e2e-oauth", Version: "1.0.0"}, nil)
	transport := &mcp.StreamableClientTransport{Endpoint: env.URL + "/mcp", MaxRetries: -1, OAuthHandler: handler,
		HTTPClient: &http.Client{Timeout: 30 * time.Second}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := client.Connect(ctx, transport, nil)
	if err != nil {
		t.Fatalf("connect through OAuth: %v", err)
	}
	defer s.Close()
	if who := toolOK(t, s, "whoami", nil); who["hash"] != hash {
		t.Errorf("whoami = %v, want %s", who, hash)
	}
	sent := toolOK(t, s, "send_message", map[string]any{"to_hash": peer, "kind": "question", "body": "Stepped up"})
	if sent["from_hash"] != hash {
		t.Errorf("send_message = %v", sent)
	}
	if len(asked) != 2 || asked[0] != "read" || !strings.Contains(asked[1], "write") {
		t.Errorf("the client asked for %q, want read, then a step-up that adds write", asked)
	}
}
