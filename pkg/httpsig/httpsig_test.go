package httpsig

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func signed(t *testing.T, s Signer, method, url string, body []byte, now time.Time) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Sign(req, body, now, time.Minute); err != nil {
		t.Fatal(err)
	}
	return req
}

func TestASignedRequestVerifiesAndAChangedOneDoesNot(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	s := Signer{Key: priv, KeyID: "kid-1", Agent: "https://svc.example/api/objects/svc_abc/http-message-signatures-directory"}
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"to_hash":"svc_bob","body":"hi"}`)
	keyOf := func(keyID, agent string) (ed25519.PublicKey, error) {
		if keyID != "kid-1" || agent != s.Agent {
			return nil, errors.New("unknown key")
		}
		return pub, nil
	}
	req := signed(t, s, "POST", "https://svc.example:443/api/messages", body, now)
	if !strings.HasPrefix(req.Header.Get(HeaderSignatureInput), `sig1=("@method" "@authority" "@path" "signature-agent" "content-digest");created=1800000000;expires=1800000060;keyid="kid-1";alg="ed25519";nonce="`) ||
		!strings.HasSuffix(req.Header.Get(HeaderSignatureInput), `";tag="web-bot-auth"`) {
		t.Fatalf("Signature-Input %s", req.Header.Get(HeaderSignatureInput))
	}
	v, err := Verify(req, body, now.Add(time.Second), keyOf)
	if err != nil || v.KeyID != "kid-1" || v.Agent != s.Agent || len(v.Nonce) == 0 {
		t.Fatalf("Verify = %+v, %v", v, err)
	}
	for name, c := range map[string]struct {
		mutate func(*http.Request) []byte
		at     time.Time
		want   error
	}{
		"changed body": {func(*http.Request) []byte { return []byte(`{"to_hash":"svc_eve"}`) }, now, ErrInvalid},
		"changed body and digest": {func(r *http.Request) []byte {
			b := []byte(`{}`)
			r.Header.Set(HeaderContentDigest, ContentDigest(b))
			return b
		}, now, ErrInvalid},
		"changed path":   {func(r *http.Request) []byte { r.URL.Path = "/api/objects"; return body }, now, ErrInvalid},
		"changed method": {func(r *http.Request) []byte { r.Method = "PUT"; return body }, now, ErrInvalid},
		"changed host":   {func(r *http.Request) []byte { r.Host = "elsewhere.example"; return body }, now, ErrInvalid},
		"changed agent": {func(r *http.Request) []byte {
			r.Header.Set(HeaderSignatureAgent, `"https://evil.example/d"`)
			return body
		}, now, nil},
		"after expires":         {func(*http.Request) []byte { return body }, now.Add(2 * time.Minute), ErrExpired},
		"created in the future": {func(*http.Request) []byte { return body }, now.Add(-time.Minute), ErrExpired},
		"unsigned":              {func(r *http.Request) []byte { r.Header.Del(HeaderSignatureInput); return body }, now, ErrUnsigned},
	} {
		r := signed(t, s, "POST", "https://svc.example/api/messages", body, now)
		b := c.mutate(r)
		_, err := Verify(r, b, c.at, keyOf)
		if err == nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: Verify = %v, want %v", name, err, c.want)
		}
	}
	if err := s.Sign(req, body, now, time.Hour); err == nil {
		t.Error("a signature living an hour was made")
	}
}
