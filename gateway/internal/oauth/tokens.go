package oauth

import (
	"errors"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// AccessTTL is an access token's lifetime. Revocation does not wait for it: a token is checked
// against its sub-key on every request.
const AccessTTL = time.Hour

// accessClaims are an access token's claims: the grant's sub-key by id (also the subject) and
// digest. The digest is what the key's principal is found and revoked by; it is no credential,
// since the key it is the digest of was never kept by anyone.
type accessClaims struct {
	jwt.RegisteredClaims
	ClientID  string `json:"client_id"`
	Scope     string `json:"scope"`
	KeyID     string `json:"key_id"`
	KeyDigest string `json:"key_digest"`
}

// mint signs an access token of g for the resource, with the gateway's access-token key.
func (s *Server) mint(g *grant, now time.Time) (string, error) {
	claims := accessClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer: s.issuer, Subject: g.KeyID, Audience: jwt.ClaimStrings{s.resource},
			IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(AccessTTL)), ID: randomToken()[:22],
		},
		ClientID: g.ClientID, Scope: strings.Join(g.Scopes, " "), KeyID: g.KeyID, KeyDigest: g.Digest,
	}
	return jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims).SignedString(s.key)
}

// Verify checks an access token's signature, issuer, expiry and audience (exactly audience,
// RFC 8707) and returns its sub-key's digest and id (auth.AccessTokens).
func (s *Server) Verify(token, audience string) (digest, keyID string, err error) {
	var claims accessClaims
	_, err = jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return s.key.Public(), nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}), jwt.WithIssuer(s.issuer), jwt.WithAudience(audience),
		jwt.WithExpirationRequired(), jwt.WithLeeway(5*time.Second))
	if err != nil {
		return "", "", err
	}
	if audience != s.resource || len(claims.Audience) != 1 || claims.KeyDigest == "" || claims.KeyID == "" {
		return "", "", errors.New("oauth: the token is not for this resource")
	}
	return claims.KeyDigest, claims.KeyID, nil
}
