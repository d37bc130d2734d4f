package signing

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
)

func TestVerifyDetachedJWS(t *testing.T) {
	t.Parallel()
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	kid, err := Thumbprint(pub)
	if err != nil {
		t.Fatal(err)
	}
	keys := KeySet{Keys: []Key{{KID: kid, X: base64.RawURLEncoding.EncodeToString(pub), CreatedAt: time.Now()}}}
	payload, err := MessagePayload{FromHash: "svc_a", ToHash: "svc_b", Kind: "note", Body: "hi <&>", SignedAt: "2026-01-01T00:00:00Z", Nonce: "n"}.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"body":"hi <&>","from_hash":"svc_a","kind":"note","nonce":"n","signed_at":"2026-01-01T00:00:00Z","thread_id":null,"to_hash":"svc_b"}`; string(payload) != want {
		t.Fatalf("canonical payload %s, want %s", payload, want)
	}
	sign := func(kid string, payload []byte) string {
		s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: jose.JSONWebKey{Key: priv, KeyID: kid}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		jws, err := s.Sign(payload)
		if err != nil {
			t.Fatal(err)
		}
		out, err := jws.DetachedCompactSerialize()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if k, err := Verify(sign(kid, payload), payload, keys); err != nil || k.KID != kid {
		t.Fatalf("verify: %v, %v", k, err)
	}
	for name, c := range map[string]struct {
		jws  string
		want error
	}{
		"changed payload": {sign(kid, append([]byte{}, payload[1:]...)), ErrBadSignature},
		"unknown kid":     {sign("other", payload), ErrUnknownKID},
		"no kid":          {sign("", payload), ErrMalformed},
		"garbage":         {"a.b.c", ErrMalformed},
	} {
		if _, err := Verify(c.jws, payload, keys); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}

func TestPublicJWKSMarksRotatedKeys(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	set := PublicJWKS(KeySet{Keys: []Key{{KID: "old", RotatedAt: &at}, {KID: "new"}}})
	if len(set.Keys) != 2 || set.Keys[0].KID != "new" || set.Keys[0].Status != StatusActive ||
		set.Keys[1].Status != StatusRotated || set.Keys[1].RotatedAt == nil || *set.Keys[1].RotatedAt != "2026-01-01T00:00:00.000Z" {
		t.Fatalf("jwks %+v", set)
	}
}
