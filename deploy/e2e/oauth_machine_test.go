package e2e

import (
	"crypto/ed25519"
	"crypto/rand"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// assertion is a private_key_jwt client assertion of the object hash, signed by priv.
func assertion(t *testing.T, env *Env, hash, kid string, priv ed25519.PrivateKey, edit func(*jwt.RegisteredClaims)) string {
	t.Helper()
	now := time.Now()
	claims := jwt.RegisteredClaims{Issuer: hash, Subject: hash, Audience: jwt.ClaimStrings{env.URL}, ID: rand.Text(),
		IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Minute))}
	if edit != nil {
		edit(&claims)
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	tok.Header["kid"] = kid
	signed, err := tok.SignedString(priv)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}

func clientCredentials(t *testing.T, env *Env, hash, assertion, scope string) (int, map[string]any) {
	t.Helper()
	return tokenCall(t, env, url.Values{"grant_type": {"client_credentials"}, "client_id": {hash}, "scope": {scope},
		"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"}, "client_assertion": {assertion}})
}

// TestOAuthClientCredentials: a headless agent gets a token with no person and no copied
// secret: a private_key_jwt assertion signed by a signing key its owner registered. The grant is
// one sub-key per signing key and scopes, reused by later assertions; an assertion replayed,
// signed by another key, for another audience or too long-lived is refused; revoking the
// sub-key ends the tokens, and the next assertion makes a new one.
func TestOAuthClientCredentials(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, nil)
	peer, _ := env.CreateObject(t, nil)
	priv, kid := registerOwnerKey(t, env, hash, key)

	first := assertion(t, env, hash, kid, priv, nil)
	st, out := clientCredentials(t, env, hash, first, "read write")
	if st != 200 || out["token_type"] != "Bearer" || out["scope"] != "read write" || out["refresh_token"] != nil {
		t.Fatalf("client_credentials: %d %v, want a token without a refresh token", st, out)
	}
	s := mcpSession(t, env, out["access_token"].(string))
	if who := toolOK(t, s, "whoami", nil); who["hash"] != hash || who["owner_key"] != false {
		t.Errorf("whoami = %v, want the object's sub-key", who)
	}
	toolOK(t, s, "send_message", map[string]any{"to_hash": peer, "kind": "note", "body": "Headless hello"})

	if st, again := clientCredentials(t, env, hash, first, "read write"); st != 401 || again["error"] != "invalid_client" {
		t.Errorf("a replayed assertion: %d %v, want 401 invalid_client", st, again)
	}
	_, wrongPriv, _ := ed25519.GenerateKey(rand.Reader)
	for name, a := range map[string]string{
		"signed by another key": assertion(t, env, hash, kid, wrongPriv, nil),
		"for another audience":  assertion(t, env, hash, kid, priv, func(c *jwt.RegisteredClaims) { c.Audience = jwt.ClaimStrings{"https://elsewhere.example"} }),
		"living an hour":        assertion(t, env, hash, kid, priv, func(c *jwt.RegisteredClaims) { c.ExpiresAt = jwt.NewNumericDate(time.Now().Add(time.Hour)) }),
		"expired":               assertion(t, env, hash, kid, priv, func(c *jwt.RegisteredClaims) { c.ExpiresAt = jwt.NewNumericDate(time.Now().Add(-time.Minute)) }),
		"naming another object": assertion(t, env, hash, kid, priv, func(c *jwt.RegisteredClaims) { c.Issuer, c.Subject = peer, peer }),
	} {
		if st, refused := clientCredentials(t, env, hash, a, "read"); st != 401 || refused["error"] != "invalid_client" {
			t.Errorf("an assertion %s: %d %v, want 401 invalid_client", name, st, refused)
		}
	}

	st, second := clientCredentials(t, env, hash, assertion(t, env, hash, kid, priv, nil), "write read")
	if st != 200 {
		t.Fatalf("a second assertion: %d %v", st, second)
	}
	keys := env.Do(t, "GET", "/api/objects/"+hash+"/keys", key, nil).Expect(t, 200).JSON(t)["keys"].([]any)
	var grants []map[string]any
	for _, k := range keys {
		if m := k.(map[string]any); strings.HasPrefix(m["label"].(string), "client_credentials") {
			grants = append(grants, m)
		}
	}
	if len(grants) != 1 {
		t.Fatalf("the object's keys hold %d client_credentials grants, want one reused: %v", len(grants), keys)
	}
	env.Do(t, "DELETE", "/api/objects/"+hash+"/keys/"+grants[0]["id"].(string), key, nil).Expect(t, 200)
	for _, tok := range []string{out["access_token"].(string), second["access_token"].(string)} {
		if r := mcpCall(t, env, tok, "whoami", nil); r.Status != 401 {
			t.Errorf("a revoked headless grant's token: %d, want 401", r.Status)
		}
	}
	st, third := clientCredentials(t, env, hash, assertion(t, env, hash, kid, priv, nil), "read write")
	if st != 200 {
		t.Fatalf("an assertion after the revocation: %d %v", st, third)
	}
	mcpCall(t, env, third["access_token"].(string), "whoami", nil).Expect(t, 200)
}
