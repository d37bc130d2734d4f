package object

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/signing"
)

func testSealer(t testing.TB) *Sealer {
	t.Helper()
	s, err := NewSealer(strings.Repeat("ab", 32))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewSealerRefusesShortSecrets(t *testing.T) {
	t.Parallel()
	for _, secret := range []string{"", "abcd", strings.Repeat("zz", 32)} {
		if _, err := NewSealer(secret); err == nil {
			t.Errorf("NewSealer(%q) accepted", secret)
		}
	}
}

func TestSignVerifiesUnderTheObjectsKeySet(t *testing.T) {
	t.Parallel()
	s, _ := newService(t)
	ctx := context.Background()
	c, _ := create(t, s, NewObject{})
	payload := []byte(`{"a":1}`)
	signed, err := s.Sign(ctx, c.Object.ID, payload, false)
	if err != nil {
		t.Fatal(err)
	}
	set, err := s.SigningKeys(ctx, c.Object.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 1 || set.Keys[0].KID != signed.KID || set.Keys[0].HeldBy != signing.HeldBySvc {
		t.Fatalf("key set %+v, signed with %s", set, signed.KID)
	}
	if _, err := signing.Verify(signed.JWS, payload, set); err != nil {
		t.Fatalf("svc's signature does not verify: %v", err)
	}
	if _, err := signing.Verify(signed.JWS, []byte(`{"a":2}`), set); !errors.Is(err, signing.ErrBadSignature) {
		t.Fatalf("changed payload: %v, want ErrBadSignature", err)
	}
	// A second read does not make another key.
	again, err := s.SigningKeys(ctx, c.Object.ID)
	if err != nil || len(again.Keys) != 1 {
		t.Fatalf("second read: %+v, %v", again, err)
	}
}

func TestRegisterOwnerKeyRotatesAndStopsSvcSigning(t *testing.T) {
	t.Parallel()
	s, _ := newService(t)
	ctx := context.Background()
	c, _ := create(t, s, NewObject{})
	first, err := s.SigningKeys(ctx, c.Object.ID)
	if err != nil {
		t.Fatal(err)
	}
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	jwk, _ := json.Marshal(map[string]string{"kty": "OKP", "crv": "Ed25519", "x": base64.RawURLEncoding.EncodeToString(pub)})
	k, err := s.RegisterSigningKey(ctx, Caller{ObjectID: c.Object.ID}, jwk)
	if err != nil {
		t.Fatal(err)
	}
	if k.HeldBy != signing.HeldByOwner {
		t.Fatalf("held by %q, want owner", k.HeldBy)
	}
	jwks, err := s.JWKS(ctx, c.Object.Hash, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(jwks.Keys) != 2 || jwks.Keys[0].KID != k.KID || jwks.Keys[0].Status != signing.StatusActive ||
		jwks.Keys[1].KID != first.Keys[0].KID || jwks.Keys[1].Status != signing.StatusRotated || jwks.Keys[1].RotatedAt == nil {
		t.Fatalf("jwks after rotation: %+v", jwks)
	}
	var he *httpx.Error
	if _, err := s.Sign(ctx, c.Object.ID, []byte("x"), false); !errors.As(err, &he) || he.Code != CodeOwnerHeldKey {
		t.Fatalf("sign with an owner-held key: %v, want %s", err, CodeOwnerHeldKey)
	}
	if _, err := s.RegisterSigningKey(ctx, Caller{ObjectID: c.Object.ID}, jwk); !errors.As(err, &he) || he.Status != 409 {
		t.Fatalf("registering the same key twice: %v, want 409", err)
	}
	// A new svc-held key makes svc sign again.
	if _, err := s.RegisterSigningKey(ctx, Caller{ObjectID: c.Object.ID}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sign(ctx, c.Object.ID, []byte("x"), false); err != nil {
		t.Fatalf("sign after a new svc key: %v", err)
	}
}

func TestRegisterRefusesPrivateAndForeignKeys(t *testing.T) {
	t.Parallel()
	s, _ := newService(t)
	c, _ := create(t, s, NewObject{})
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	for name, jwk := range map[string]string{
		"private": `{"kty":"OKP","crv":"Ed25519","x":"` + base64.RawURLEncoding.EncodeToString(priv.Public().(ed25519.PublicKey)) +
			`","d":"` + base64.RawURLEncoding.EncodeToString(priv.Seed()) + `"}`,
		"not a jwk": `{"kty":"nope"}`,
		"symmetric": `{"kty":"oct","k":"c2VjcmV0"}`,
	} {
		var he *httpx.Error
		if _, err := s.RegisterSigningKey(context.Background(), Caller{ObjectID: c.Object.ID}, json.RawMessage(jwk)); !errors.As(err, &he) || he.Status != 400 {
			t.Errorf("%s: %v, want 400", name, err)
		}
	}
}

func TestJWKSOfAPrivateObjectIsNotFoundForOthers(t *testing.T) {
	t.Parallel()
	s, _ := newService(t)
	private := contract.Private
	c, _ := create(t, s, NewObject{Visibility: &private})
	var he *httpx.Error
	if _, err := s.JWKS(context.Background(), c.Object.Hash, ""); !errors.As(err, &he) || he.Status != 404 {
		t.Fatalf("anonymous read: %v, want 404", err)
	}
	if _, err := s.JWKS(context.Background(), c.Object.Hash, c.Object.ID); err != nil {
		t.Fatalf("owner's read: %v", err)
	}
}
