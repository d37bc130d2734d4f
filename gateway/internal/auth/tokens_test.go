package auth

import (
	"context"
	"errors"
	"testing"

	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/httpx"
)

// tokens accepts one access token for one audience, naming a sub-key.
type tokens struct{ token, audience, digest, keyID string }

func (s tokens) Verify(token, audience string) (string, string, error) {
	if token != s.token || audience != s.audience {
		return "", "", errors.New("not valid")
	}
	return s.digest, s.keyID, nil
}

// TestAccessTokens: an access token is answered by its sub-key's principal, only on requests
// served for its resource, and only while it names the key the digest is.
func TestAccessTokens(t *testing.T) {
	t.Parallel()
	_, digest := apikey.Generate(apikey.SubPrefix)
	const token, resource = "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJrZXlfMSJ9.c2ln", "https://svc.example/mcp"
	a := New(&countingVerifier{digest: digest})
	a.AcceptTokens(tokens{token: token, audience: resource, digest: digest, keyID: "key_1"})
	b := newBudget(1000)
	onMCP := WithResource(context.Background(), resource)

	p, err := a.Authenticate(onMCP, "Bearer "+token, b.charge)
	if err != nil || p.KeyID != "key_1" {
		t.Fatalf("a token on its resource = %+v %v, want the sub-key's principal", p, err)
	}
	for name, ctx := range map[string]context.Context{
		"on a REST route":      context.Background(),
		"for another resource": WithResource(context.Background(), "https://svc.example/other"),
	} {
		if _, err := a.Authenticate(ctx, "Bearer "+token, b.charge); httpx.AsError(err).Code != httpx.CodeUnauthorized {
			t.Errorf("a token %s: %v, want UNAUTHORIZED", name, err)
		}
	}
	a.AcceptTokens(tokens{token: token, audience: resource, digest: digest, keyID: "key_2"})
	if _, err := a.Authenticate(onMCP, "Bearer "+token, b.charge); httpx.AsError(err).Code != httpx.CodeUnauthorized {
		t.Errorf("a token naming another key than its digest's: %v, want UNAUTHORIZED", err)
	}
	a.AcceptTokens(tokens{token: token, audience: resource, digest: "unknown", keyID: "key_1"})
	if _, err := a.Authenticate(onMCP, "Bearer "+token, b.charge); httpx.AsError(err).Code != httpx.CodeUnauthorized {
		t.Errorf("a token whose sub-key is gone: %v, want UNAUTHORIZED", err)
	}
}
