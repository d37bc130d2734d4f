package client

import (
	"bytes"
	"cmp"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/svcdev/svc/pkg/httpsig"
	"github.com/svcdev/svc/pkg/signing"
)

// SigningKey is an object's own Ed25519 key, its private half held by the owner (never sent to
// svc): the JWK of the private key, with the kid svc lists in jwks.json.
type SigningKey struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	D   string `json:"d"`
	KID string `json:"kid"`
	// Hash is the object the key signs for.
	Hash string `json:"svc_hash"`
}

// NewSigningKey makes a key pair and registers its public half as the active signing key of
// hash (the client must hold hash's owner key); the previous key stays, marked rotated.
func (c *Client) NewSigningKey(ctx context.Context, hash string) (*SigningKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	k := &SigningKey{Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(pub),
		D: base64.RawURLEncoding.EncodeToString(priv.Seed()), Hash: hash}
	var out struct {
		KID string `json:"kid"`
	}
	in := map[string]any{"jwk": map[string]string{"kty": k.Kty, "crv": k.Crv, "x": k.X}}
	if err := c.call(ctx, "POST", "/api/objects/"+url.PathEscape(hash)+"/signing-keys", in, nil, &out); err != nil {
		return nil, err
	}
	k.KID = out.KID
	return k, nil
}

// DirectoryURL is where svc publishes an object's keys for signed requests (Web Bot Auth's
// signature agent).
func DirectoryURL(baseURL, hash string) string { return httpsig.ObjectDirectoryURL(baseURL, hash) }

// RequestSigner returns the signer of requests made as the key's object, whose keys svc at
// baseURL publishes.
func (k *SigningKey) RequestSigner(baseURL string) (httpsig.Signer, error) {
	seed, err := base64.RawURLEncoding.DecodeString(k.D)
	if err != nil || len(seed) != ed25519.SeedSize {
		return httpsig.Signer{}, fmt.Errorf("signing key: d is not an Ed25519 seed")
	}
	priv := ed25519.NewKeyFromSeed(seed)
	kid, err := signing.Thumbprint(priv.Public().(ed25519.PublicKey))
	if err != nil {
		return httpsig.Signer{}, err
	}
	return httpsig.Signer{Key: priv, KeyID: kid, Agent: DirectoryURL(baseURL, k.Hash)}, nil
}

// SigningTransport signs every request it carries with Signer (HTTP Message Signatures, Web Bot
// Auth profile), valid for TTL, then passes it to Base (http.DefaultTransport when nil). A
// request's body is read whole to digest it.
type SigningTransport struct {
	Signer httpsig.Signer
	TTL    time.Duration
	Base   http.RoundTripper
}

// RoundTrip signs req and sends it.
func (t *SigningTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, fmt.Errorf("sign request: %w", err)
		}
		_ = req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	if err := t.Signer.Sign(req, body, time.Now(), cmp.Or(t.TTL, time.Minute)); err != nil {
		return nil, err
	}
	return cmp.Or(t.Base, http.DefaultTransport).RoundTrip(req)
}
