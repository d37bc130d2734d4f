// Package authn mints and verifies the short-lived internal JWTs (EdDSA) that carry a request's
// principal from the gateway to a service, and from one service to another. Services never see
// an API key: they trust only a token that verifies against the internal key.
package authn

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/golang-jwt/jwt/v5"

	"github.com/svcdev/svc/pkg/httpx"
)

// TokenTTL bounds the life of an internal token (DESIGN §3: exp ≤ 60 s).
const TokenTTL = 30 * time.Second

// Scopes of sub-keys. The owner key holds all of them.
const (
	ScopeRead    = "read"
	ScopeWrite   = "write"
	ScopeMailbox = "mailbox"
)

// Principal is the authenticated caller: the object whose key was presented.
type Principal struct {
	ObjectID string   `json:"oid"`
	Hash     string   `json:"hash"`
	KeyID    string   `json:"kid"`
	Owner    bool     `json:"owner"` // the owner key itself, not a sub-key
	Scopes   []string `json:"scopes,omitempty"`
}

// HasScope reports whether the principal may act with scope s.
func (p *Principal) HasScope(s string) bool {
	return p != nil && (p.Owner || slices.Contains(p.Scopes, s))
}

// Target is the object named by the route's {hash}, resolved by the gateway.
type Target struct {
	ObjectID   string `json:"oid"`
	Hash       string `json:"hash"`
	Visibility string `json:"vis"`
}

// Claims are the internal token's claims.
type Claims struct {
	jwt.RegisteredClaims
	Principal *Principal `json:"prn,omitempty"`
	Target    *Target    `json:"tgt,omitempty"`
	RequestID string     `json:"rid,omitempty"`
}

// Keys signs and verifies internal tokens.
type Keys struct {
	priv ed25519.PrivateKey
	pub  ed25519.PublicKey
}

// ParseKeys reads the base64 of a 32-byte Ed25519 seed.
func ParseKeys(seedB64 string) (*Keys, error) {
	seed, err := base64.StdEncoding.DecodeString(strings.TrimSpace(seedB64))
	if err != nil {
		return nil, errors.New("internal JWT key: not base64")
	}
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("internal JWT key: want a %d-byte Ed25519 seed, got %d bytes", ed25519.SeedSize, len(seed))
	}
	priv := ed25519.NewKeyFromSeed(seed)
	return &Keys{priv: priv, pub: priv.Public().(ed25519.PublicKey)}, nil
}

// GenerateSeed returns a fresh base64 seed, for the all-in-one mode and tests.
func GenerateSeed() string {
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return base64.StdEncoding.EncodeToString(priv.Seed())
}

// Mint signs a token from issuer for audience.
func (k *Keys) Mint(issuer, audience string, p *Principal, t *Target, requestID string) (string, error) {
	now := time.Now()
	claims := Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    issuer,
			Audience:  jwt.ClaimStrings{audience},
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(TokenTTL)),
		},
		Principal: p, Target: t, RequestID: requestID,
	}
	if p != nil {
		claims.Subject = p.ObjectID
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims).SignedString(k.priv)
	if err != nil {
		return "", fmt.Errorf("sign internal token: %w", err)
	}
	return s, nil
}

// Verify checks a token's signature, expiry and audience.
func (k *Keys) Verify(token, audience string) (*Claims, error) {
	var claims Claims
	_, err := jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return k.pub, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}),
		jwt.WithAudience(audience), jwt.WithExpirationRequired(), jwt.WithLeeway(5*time.Second))
	if err != nil {
		return nil, fmt.Errorf("verify internal token: %w", err)
	}
	return &claims, nil
}

const claimsKey = "svc.claims"

// Require is the middleware of every service: it refuses any request without a valid internal
// token for audience, and stores the claims for the handlers.
func Require(k *Keys, audience string) gin.HandlerFunc {
	return func(c *gin.Context) {
		raw, ok := strings.CutPrefix(c.GetHeader("Authorization"), "Bearer ")
		if !ok {
			httpx.Abort(c, httpx.Unauthorized("missing internal token"))
			return
		}
		claims, err := k.Verify(raw, audience)
		if err != nil {
			httpx.Abort(c, httpx.Unauthorized("invalid internal token"))
			return
		}
		c.Set(claimsKey, claims)
		c.Next()
	}
}

// ClaimsFrom returns the verified claims of the request (never nil after Require).
func ClaimsFrom(c *gin.Context) *Claims {
	if v, ok := c.Get(claimsKey); ok {
		return v.(*Claims)
	}
	return &Claims{}
}

// PrincipalFrom returns the caller, or nil on a public route.
func PrincipalFrom(c *gin.Context) *Principal { return ClaimsFrom(c).Principal }

// TargetFrom returns the object named by the route's {hash}, or nil.
func TargetFrom(c *gin.Context) *Target { return ClaimsFrom(c).Target }

// Owner returns the caller and the resolved target when the caller owns it, and the error to
// answer otherwise. The gateway already checks this; services check again so that no route
// depends on one layer alone.
func Owner(c *gin.Context) (*Principal, *Target, error) {
	p, t := PrincipalFrom(c), TargetFrom(c)
	if p == nil {
		return nil, nil, httpx.Unauthorized("an API key is required")
	}
	if t == nil || t.ObjectID != p.ObjectID {
		return nil, nil, httpx.Forbidden(httpx.CodeForbidden, "this key does not own the object")
	}
	return p, t, nil
}

// RequireOwner is Owner for handlers that render their own errors: it aborts the request when
// the caller does not own the target.
func RequireOwner(c *gin.Context) (*Principal, *Target, bool) {
	p, t, err := Owner(c)
	if err != nil {
		httpx.Abort(c, err)
		return nil, nil, false
	}
	return p, t, true
}

// Transport adds an internal token and the request id to service-to-service requests.
type Transport struct {
	Keys     *Keys
	Issuer   string
	Audience string
	Base     http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	rid := httpx.RequestIDFrom(req.Context())
	tok, err := t.Keys.Mint(t.Issuer, t.Audience, nil, nil, rid)
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+tok)
	if rid != "" {
		req.Header.Set(httpx.HeaderRequestID, rid)
	}
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(req)
}

// PublicTargetID returns the object id of the route's target when the object is public, else "":
// the key under which a public read may be cached and revalidated.
func PublicTargetID(c *gin.Context) string {
	if t := TargetFrom(c); t != nil && t.Visibility == "public" {
		return t.ObjectID
	}
	return ""
}
