package auth

import (
	"context"
	"strings"

	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/httpx"
)

// AccessTokens verifies the gateway's OAuth access tokens (package oauth): a token valid for
// audience names the sub-key its grant is, by key id and digest.
type AccessTokens interface {
	Verify(token, audience string) (digest, keyID string, err error)
}

// AcceptTokens makes the authenticator take OAuth access tokens beside API keys, on requests
// whose context names the token's resource (WithResource).
func (a *Authenticator) AcceptTokens(t AccessTokens) { a.tokens = t }

// IsAccessToken reports whether a bearer credential is shaped as an access token (a JWT) rather
// than an API key.
func IsAccessToken(bearer string) bool {
	return strings.HasPrefix(bearer, "eyJ") && strings.Count(bearer, ".") == 2
}

type resourceKey struct{}

// WithResource says that the request is served for the protected resource resource (/mcp, and
// the route calls its tools make): an access token is accepted only when its audience is that
// resource (RFC 8707), so a token issued for /mcp is refused by the REST routes called directly.
func WithResource(ctx context.Context, resource string) context.Context {
	return context.WithValue(ctx, resourceKey{}, resource)
}

func resourceFrom(ctx context.Context) string {
	r, _ := ctx.Value(resourceKey{}).(string)
	return r
}

// authenticateToken verifies an access token and answers the principal of its grant's sub-key
// by the key's own path (ByDigest): the token binds no longer than the sub-key, and carries the
// same scopes and limits.
func (a *Authenticator) authenticateToken(ctx context.Context, token string, charge Charge) (*authn.Principal, error) {
	resource := resourceFrom(ctx)
	if resource == "" {
		return nil, refuse(ctx, charge, "an OAuth access token is accepted at /mcp only; REST takes an API key")
	}
	digest, keyID, err := a.tokens.Verify(token, resource)
	if err != nil {
		return nil, refuse(ctx, charge, "the access token is not valid")
	}
	p, err := a.ByDigest(ctx, digest, charge)
	if err != nil {
		if httpx.AsError(err).Status == 401 {
			return nil, httpx.Unauthorized("the access token's grant was revoked")
		}
		return nil, err
	}
	if p.KeyID != keyID {
		return nil, refuse(ctx, charge, "the access token is not valid")
	}
	return p, nil
}
