// Package signing holds what identity-svc, mailbox-svc and context-svc share about objects'
// signing keys: the public key as a JWK (RFC 7517) with its RFC 7638 thumbprint as key id, the
// canonical (RFC 8785 JCS) payloads that are signed, and the verification of a detached compact
// JWS (RFC 7515, appendix F). Private keys never leave identity-svc; this package only verifies.
package signing

import (
	"crypto"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/gowebpki/jcs"

	"github.com/svcdev/svc/pkg/clock"
)

// Alg is the JWS algorithm of every object key: Ed25519 (RFC 8037).
const Alg = "EdDSA"

// Key states in a key set.
const (
	StatusActive  = "active"
	StatusRotated = "rotated"
)

// Who holds a key's private half.
const (
	HeldBySvc   = "svc"
	HeldByOwner = "owner"
)

// Key is one public key of an object as the services pass it around.
type Key struct {
	KID       string     `json:"kid"`
	X         string     `json:"x"` // base64url of the 32-byte Ed25519 public key
	HeldBy    string     `json:"held_by"`
	CreatedAt time.Time  `json:"created_at"`
	RotatedAt *time.Time `json:"rotated_at,omitempty"`
}

// KeySet is an object's keys, oldest first; the last one is the active key.
type KeySet struct {
	Keys []Key `json:"keys"`
}

// Active returns the key new signatures are made with, or nil.
func (s KeySet) Active() *Key {
	if len(s.Keys) == 0 {
		return nil
	}
	return &s.Keys[len(s.Keys)-1]
}

// Find returns the key with kid, or nil.
func (s KeySet) Find(kid string) *Key {
	if i := slices.IndexFunc(s.Keys, func(k Key) bool { return k.KID == kid }); i >= 0 {
		return &s.Keys[i]
	}
	return nil
}

// PublicKey decodes the key's Ed25519 public key.
func (k Key) PublicKey() (ed25519.PublicKey, error) {
	raw, err := base64.RawURLEncoding.DecodeString(k.X)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, errors.New("not an Ed25519 public key")
	}
	return ed25519.PublicKey(raw), nil
}

// Thumbprint is the RFC 7638 SHA-256 thumbprint of an Ed25519 public key, base64url: the key id
// of every object key, stable because it is the key itself.
func Thumbprint(pub ed25519.PublicKey) (string, error) {
	jwk := jose.JSONWebKey{Key: pub}
	tp, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", fmt.Errorf("thumbprint: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(tp), nil
}

// JWK is a public key as a JSON Web Key (RFC 7517, OKP per RFC 8037), with the members svc adds:
// status (active or rotated), who holds the private half and when the key was made and rotated
// away. Verifiers that do not know them ignore them (RFC 7517 §4).
type JWK struct {
	Kty       string  `json:"kty"`
	Crv       string  `json:"crv"`
	X         string  `json:"x"`
	KID       string  `json:"kid"`
	Alg       string  `json:"alg"`
	Use       string  `json:"use"`
	Status    string  `json:"status"`
	HeldBy    string  `json:"held_by"`
	CreatedAt string  `json:"created_at"`
	RotatedAt *string `json:"rotated_at,omitempty"`
}

// JWKS is the document served at /api/objects/{hash}/jwks.json.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// PublicJWKS turns a key set into its JWK Set, newest first.
func PublicJWKS(s KeySet) JWKS {
	out := JWKS{Keys: make([]JWK, 0, len(s.Keys))}
	for _, k := range slices.Backward(s.Keys) {
		j := JWK{Kty: "OKP", Crv: "Ed25519", X: k.X, KID: k.KID, Alg: Alg, Use: "sig", Status: StatusActive,
			HeldBy: k.HeldBy, CreatedAt: clock.Format(k.CreatedAt)}
		if k.RotatedAt != nil {
			at := clock.Format(*k.RotatedAt)
			j.Status, j.RotatedAt = StatusRotated, &at
		}
		out.Keys = append(out.Keys, j)
	}
	return out
}

// ParseOwnerJWK reads the public key an owner registers: an OKP Ed25519 JWK without private
// parts. It returns the key and its thumbprint.
func ParseOwnerJWK(raw json.RawMessage) (ed25519.PublicKey, string, error) {
	var jwk jose.JSONWebKey
	if err := jwk.UnmarshalJSON(raw); err != nil {
		return nil, "", fmt.Errorf("not a JSON Web Key: %w", err)
	}
	if !jwk.IsPublic() {
		return nil, "", errors.New("the JWK holds a private key; register only the public key")
	}
	pub, ok := jwk.Key.(ed25519.PublicKey)
	if !ok {
		return nil, "", errors.New("only Ed25519 keys (kty OKP, crv Ed25519) are accepted")
	}
	kid, err := Thumbprint(pub)
	return pub, kid, err
}

// Canonical is the RFC 8785 canonical JSON of v.
func Canonical(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	return out, nil
}

// MessagePayload is what a message signature covers (docs/api.md, "Signed messages"): the
// message fields as sent, the signing time and the sender's id for the message, which makes a
// replay recognisable.
type MessagePayload struct {
	FromHash string  `json:"from_hash"`
	ToHash   string  `json:"to_hash"`
	Kind     string  `json:"kind"`
	Body     string  `json:"body"`
	ThreadID *string `json:"thread_id"`
	SignedAt string  `json:"signed_at"`
	Nonce    string  `json:"nonce"`
}

// Bytes is the payload's canonical form, the bytes the JWS signs.
func (p MessagePayload) Bytes() ([]byte, error) { return Canonical(p) }

// Errors of Verify, so that callers can answer each clearly.
var (
	ErrMalformed    = errors.New("not a detached compact JWS with an EdDSA protected header and a kid")
	ErrUnknownKID   = errors.New("the kid is not a key of the sender")
	ErrBadSignature = errors.New("the signature does not match the payload")
)

// Verify checks a detached compact JWS over payload against the key set and returns the key
// that made it.
func Verify(compact string, payload []byte, keys KeySet) (*Key, error) {
	sig, err := jose.ParseDetached(compact, payload, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil || len(sig.Signatures) != 1 || sig.Signatures[0].Protected.KeyID == "" {
		return nil, ErrMalformed
	}
	k := keys.Find(sig.Signatures[0].Protected.KeyID)
	if k == nil {
		return nil, ErrUnknownKID
	}
	pub, err := k.PublicKey()
	if err != nil {
		return nil, ErrUnknownKID
	}
	if _, err := sig.Verify(pub); err != nil {
		return nil, ErrBadSignature
	}
	return k, nil
}
