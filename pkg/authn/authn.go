// Package authn mints and verifies the short-lived internal JWTs (EdDSA) between the gateway and
// the services. Only the gateway's tokens, signed by a key that only the gateway holds, carry a
// request's principal and target; services verify them with the gateway's public key. Services
// call each other with tokens of their own key, which carry neither. Services never see an API key.
package authn

import (
	"cmp"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/golang-jwt/jwt/v5"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/httpx"
)

// TokenTTL bounds the life of an internal token (DESIGN §3: exp ≤ 60 s).
const TokenTTL = 30 * time.Second

// Scopes of sub-keys (contract's). The owner key holds all of them.
const (
	ScopeRead    = contract.ScopeRead
	ScopeWrite   = contract.ScopeWrite
	ScopeMailbox = contract.ScopeMailbox
)

// Principal is the authenticated caller: the object whose key was presented (contract.Principal,
// the one caller type of handlers and use cases).
type Principal = contract.Principal

// Target is the object named by the route's {hash}, resolved by the gateway (contract.Target).
type Target = contract.Target

// Claims are the internal token's claims.
type Claims struct {
	jwt.RegisteredClaims
	Principal *Principal `json:"prn,omitempty"`
	Target    *Target    `json:"tgt,omitempty"`
	RequestID string     `json:"rid,omitempty"`
	// Client is an opaque digest of the client address the gateway found (ClientDigest): what
	// tells anonymous callers apart where a service must (an idempotency record answers only the
	// caller that made it).
	Client string `json:"cli,omitempty"`
}

// ClientDigest is the Client claim of a request from ip: a digest, so that services and their
// stores do not keep clients' addresses.
func ClientDigest(ip string) string {
	sum := sha256.Sum256([]byte("svc client\x00" + ip))
	return hex.EncodeToString(sum[:12])
}

// GatewayIssuer is the issuer of the gateway's tokens, the only ones that may carry a principal
// or a target.
const GatewayIssuer = "gateway"

// SigningKey signs internal tokens: the gateway's key, or the key services share for calls
// between them.
type SigningKey struct {
	priv ed25519.PrivateKey
}

// ParseSigningKey reads an Ed25519 private key: the base64 of its 32-byte seed, or a PEM PKCS #8
// private key (openssl genpkey -algorithm ed25519).
func ParseSigningKey(s string) (*SigningKey, error) {
	s = strings.TrimSpace(s)
	if block, _ := pem.Decode([]byte(s)); block != nil {
		key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		priv, ok := key.(ed25519.PrivateKey)
		if err != nil || !ok {
			return nil, errors.New("not a PEM Ed25519 private key")
		}
		return &SigningKey{priv: priv}, nil
	}
	seed, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, errors.New("neither PEM nor base64")
	}
	if len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("want a %d-byte Ed25519 seed, got %d bytes", ed25519.SeedSize, len(seed))
	}
	return &SigningKey{priv: ed25519.NewKeyFromSeed(seed)}, nil
}

// ParsePublicKey reads an Ed25519 public key: the base64 of its 32 bytes, a PEM public key
// (openssl pkey -pubout) or a PEM certificate holding it.
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	s = strings.TrimSpace(s)
	if block, _ := pem.Decode([]byte(s)); block != nil {
		var key any
		var err error
		switch block.Type {
		case "PUBLIC KEY":
			key, err = x509.ParsePKIXPublicKey(block.Bytes)
		case "CERTIFICATE":
			var cert *x509.Certificate
			if cert, err = x509.ParseCertificate(block.Bytes); err == nil {
				key = cert.PublicKey
			}
		}
		pub, ok := key.(ed25519.PublicKey)
		if err != nil || !ok {
			return nil, errors.New("not a PEM Ed25519 public key or certificate")
		}
		return pub, nil
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, errors.New("neither PEM nor base64")
	}
	if len(raw) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("want a %d-byte Ed25519 public key, got %d bytes", ed25519.PublicKeySize, len(raw))
	}
	return ed25519.PublicKey(raw), nil
}

// GenerateSeed returns a fresh base64 seed, for the all-in-one mode and tests.
func GenerateSeed() string {
	_, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return base64.StdEncoding.EncodeToString(priv.Seed())
}

// Public returns the key that verifies the tokens k signs.
func (k *SigningKey) Public() ed25519.PublicKey { return k.priv.Public().(ed25519.PublicKey) }

// Derive returns a secret for purpose, derived from the key: every holder of the key (every
// gateway replica) derives the same one, and no one without it can.
func (k *SigningKey) Derive(purpose string) []byte {
	m := hmac.New(sha256.New, k.priv.Seed())
	m.Write([]byte(purpose))
	return m.Sum(nil)
}

// Mint signs a token from issuer for audience.
func (k *SigningKey) Mint(issuer, audience string, p *Principal, t *Target, requestID string) (string, error) {
	return k.MintFor(issuer, audience, p, t, requestID, "")
}

// MintFor is Mint for a request of the client whose ClientDigest is client.
func (k *SigningKey) MintFor(issuer, audience string, p *Principal, t *Target, requestID, client string) (string, error) {
	now := time.Now()
	claims := Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    issuer,
			Audience:  jwt.ClaimStrings{audience},
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(TokenTTL)),
		},
		Principal: p, Target: t, RequestID: requestID, Client: client,
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

// Verifier checks the internal tokens a service accepts: the gateway's, verified with its public
// key, and the services' own, which may carry no principal and no target.
type Verifier struct {
	gateway ed25519.PublicKey
	service ed25519.PublicKey
}

// NewVerifier returns the verifier of a service holding the gateway's public key and the
// services' signing key. The two must differ, or a service could sign as the gateway.
func NewVerifier(gateway ed25519.PublicKey, service *SigningKey) (*Verifier, error) {
	if gateway.Equal(service.Public()) {
		return nil, errors.New("the services' key is the gateway's: give the gateway a key of its own")
	}
	return &Verifier{gateway: gateway, service: service.Public()}, nil
}

// ErrServicePrincipal refuses a token that claims a principal or a target without being the
// gateway's.
var ErrServicePrincipal = errors.New("only the gateway's tokens carry a principal or a target")

// Verify checks a token's signature, expiry and audience. A token whose issuer is the gateway
// verifies only with the gateway's key; any other verifies with the services' key and is
// refused when it carries a principal or a target.
func (v *Verifier) Verify(token, audience string) (*Claims, error) {
	var claims Claims
	_, err := jwt.ParseWithClaims(token, &claims, func(t *jwt.Token) (any, error) {
		if iss, _ := t.Claims.GetIssuer(); iss == GatewayIssuer {
			return v.gateway, nil
		}
		return v.service, nil
	}, jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}),
		jwt.WithAudience(audience), jwt.WithExpirationRequired(), jwt.WithLeeway(5*time.Second))
	if err != nil {
		return nil, fmt.Errorf("verify internal token: %w", err)
	}
	if claims.Issuer != GatewayIssuer && (claims.Principal != nil || claims.Target != nil) {
		return nil, fmt.Errorf("verify internal token from %q: %w", claims.Issuer, ErrServicePrincipal)
	}
	return &claims, nil
}

const claimsKey = "svc.claims"

// Require is the middleware of every service: it refuses any request without a valid internal
// token for audience, and stores the claims for the handlers.
func Require(v *Verifier, audience string) gin.HandlerFunc {
	return func(c *gin.Context) {
		raw, ok := strings.CutPrefix(c.GetHeader("Authorization"), "Bearer ")
		if !ok {
			httpx.Abort(c, httpx.Unauthorized("missing internal token"))
			return
		}
		claims, err := v.Verify(raw, audience)
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

// Transport adds an internal token, with no principal, and the request id to service-to-service
// requests.
type Transport struct {
	Key      *SigningKey
	Issuer   string
	Audience string
	Base     http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	rid := httpx.RequestIDFrom(req.Context())
	tok, err := t.Key.Mint(t.Issuer, t.Audience, nil, nil, rid)
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+tok)
	if rid != "" {
		req.Header.Set(httpx.HeaderRequestID, rid)
	}
	return cmp.Or(t.Base, http.DefaultTransport).RoundTrip(req)
}

// PublicTargetID returns the object id of the route's target when the object is public, else "":
// the key under which a public read may be cached and revalidated.
func PublicTargetID(c *gin.Context) string {
	if t := TargetFrom(c); t != nil && t.Visibility == contract.Public {
		return t.ObjectID
	}
	return ""
}
