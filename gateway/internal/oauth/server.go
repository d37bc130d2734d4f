// Package oauth is the gateway's OAuth 2.1 authorization server for /mcp (the MCP authorization
// spec): discovery (RFC 8414), authorization code with PKCE S256, clients named by their Client ID
// Metadata Document, the issuer in the response (RFC 9207), tokens bound to /mcp (RFC 8707) and
// rotating refresh tokens. A grant is a sub-key of the object, made by identity-svc's sub-key use
// case and never handed out: an access token names the sub-key's digest, and the gateway's
// authenticator answers it by the sub-key's own path, so that it has the sub-key's scopes and
// limits, shows in the object's keys with its last use, and is refused once the key is deleted.
package oauth

import (
	"context"
	"crypto/ed25519"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/gateway/internal/auth"
	"github.com/svcdev/svc/gateway/internal/ratelimit"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/outbound"
	"github.com/svcdev/svc/pkg/signing"
)

// Paths of the authorization server, under the issuer.
const (
	MetadataPath  = "/.well-known/oauth-authorization-server"
	AuthorizePath = "/oauth/authorize"
	TokenPath     = "/oauth/token"
)

// Scopes are the scopes a grant may hold: those of sub-keys.
var Scopes = []string{authn.ScopeRead, authn.ScopeWrite, authn.ScopeMailbox}

// Authenticator is what the server needs of the gateway's authenticator: the key the owner
// pastes on the consent page, and the grant's sub-key on a refresh.
type Authenticator interface {
	Authenticate(ctx context.Context, header string, charge auth.Charge) (*authn.Principal, error)
	ByDigest(ctx context.Context, digest string, charge auth.Charge) (*authn.Principal, error)
}

// Identity is what the server needs of identity-svc: the object shown on the consent page, the
// object and signing keys a headless client's assertion names, and the sub-key a grant is.
type Identity interface {
	Object(ctx context.Context, objectID string) (*contract.Object, error)
	Resolve(ctx context.Context, hash string) (*identity.Object, error)
	SigningKeys(ctx context.Context, objectID string) (signing.KeySet, error)
	FreshSigningKeys(ctx context.Context, objectID string) (signing.KeySet, error)
	CreateGrantKey(ctx context.Context, objectID string, req contract.GrantKeyRequest) (*contract.GrantKey, error)
	RevokeGrantKey(ctx context.Context, objectID, keyID string) error
	// LookupKey verifies a key digest at identity-svc itself, which records the key's use.
	LookupKey(ctx context.Context, digest string) (*authn.Principal, error)
}

// Limiter applies a rate limit (the gateway's ratelimit package).
type Limiter interface {
	Allow(ctx context.Context, lim ratelimit.Limit, key string) error
}

// Options are what the server is built from.
type Options struct {
	// Issuer is the gateway's base URL: the issuer identifier, and with /mcp the only resource
	// a token is issued for.
	Issuer   string
	Engine   http.Handler // serves the routes the consent page reads the box through
	Auth     Authenticator
	Identity Identity
	Redis    *redis.Client
	Limiter  Limiter
	Limits   ratelimit.Config
	// Fetch fetches Client ID Metadata Documents: the outbound guard's client.
	Fetch *outbound.Client
	// SigningSeed is the 32-byte seed of the access tokens' Ed25519 key (derived from the
	// gateway's key, the same on every replica).
	SigningSeed []byte
	// AutoConsentKey, for conformance tests only (OAUTH_TEST_AUTO_CONSENT_KEY), approves every
	// authorization request with this key without showing the consent page.
	AutoConsentKey string
	Log            *slog.Logger
}

// Server is the authorization server.
type Server struct {
	opts     Options
	issuer   string
	resource string
	key      ed25519.PrivateKey
	clients  *clients
}

// New builds the server.
func New(opts Options) (*Server, error) {
	if opts.Engine == nil || opts.Auth == nil || opts.Identity == nil || opts.Redis == nil || opts.Limiter == nil ||
		opts.Fetch == nil || opts.Log == nil || len(opts.SigningSeed) != ed25519.SeedSize || opts.Issuer == "" {
		return nil, errors.New("oauth: Issuer, Engine, Auth, Identity, Redis, Limiter, Fetch, Log and a 32-byte SigningSeed are required")
	}
	registerAlgorithms()
	issuer := strings.TrimRight(opts.Issuer, "/")
	return &Server{opts: opts, issuer: issuer, resource: issuer + "/mcp", key: newKey(opts.SigningSeed),
		clients: newClients(opts.Fetch)}, nil
}

// newKey is the access tokens' key of a seed.
func newKey(seed []byte) ed25519.PrivateKey { return ed25519.NewKeyFromSeed(seed) }

// Issuer is the issuer identifier (RFC 8414), which the protected resource's metadata names.
func (s *Server) Issuer() string { return s.issuer }

// Resource is the one resource tokens are issued for: the MCP endpoint.
func (s *Server) Resource() string { return s.resource }

// Mount serves the server's endpoints on e. The metadata and the token endpoint answer any
// origin (CORS), so that clients running in a browser can use them: neither reads a cookie,
// and a token request proves itself by its code, refresh token or assertion.
func (s *Server) Mount(e *gin.Engine) {
	e.GET(MetadataPath, anyOrigin, s.metadata)
	e.OPTIONS(MetadataPath, anyOrigin)
	e.GET(AuthorizePath, s.authorize)
	e.POST(AuthorizePath, s.consent)
	e.POST(TokenPath, anyOrigin, s.token)
	e.OPTIONS(TokenPath, anyOrigin)
}

// anyOrigin allows cross-origin reads of the answer, and answers a preflight.
func anyOrigin(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	if c.Request.Method == http.MethodOptions {
		h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization, MCP-Protocol-Version")
		h.Set("Access-Control-Max-Age", "86400")
		c.AbortWithStatus(http.StatusNoContent)
	}
}

// limitIP applies the public per-IP limit to the server's endpoints.
func (s *Server) limitIP(c *gin.Context) error {
	l := s.opts.Limits
	return s.opts.Limiter.Allow(c.Request.Context(), ratelimit.Limit{Name: "public", PerMin: l.PublicPerMin, Burst: l.PublicBurst},
		ratelimit.ClientKey(c.ClientIP()))
}

// charge is the failed-authentication budget of the calling address (auth.Charge).
func (s *Server) charge(c *gin.Context) auth.Charge {
	l := s.opts.Limits
	lim := ratelimit.Limit{Name: "auth-ip", PerMin: l.AuthIPPerMin, Burst: l.AuthIPBurst}
	client := ratelimit.ClientKey(c.ClientIP())
	return func(ctx context.Context) error { return s.opts.Limiter.Allow(ctx, lim, client) }
}
