// Package auth turns a bearer API key into a principal: the checksum is checked with no lookup,
// then an in-process cache (half a second, so that a revocation reaches every replica within a
// second), then Redis, then identity-svc.
package auth

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
)

// LocalTTL bounds how long a replica trusts a principal without asking Redis; revocation tombstones
// in Redis are therefore seen by every replica within LocalTTL.
const LocalTTL = 500 * time.Millisecond

// MissTTL is how long a replica remembers that a key is unknown or revoked, so that a client
// repeating a bad key costs identity-svc one lookup per MissTTL. A key is random and unknown
// until it is created, and a revoked key never comes back, so a miss cannot turn into a hit.
const MissTTL = 10 * time.Second

// Verifier is what the authenticator needs of identity-svc's client.
type Verifier interface {
	VerifyKey(ctx context.Context, digest string) (*authn.Principal, error)
}

// Authenticator verifies keys.
type Authenticator struct {
	verifier Verifier
	local    *expirable.LRU[string, *authn.Principal]
	misses   *expirable.LRU[string, struct{}]
}

// New returns an authenticator over verifier.
func New(verifier Verifier) *Authenticator {
	return &Authenticator{verifier: verifier, local: expirable.NewLRU[string, *authn.Principal](100_000, nil, LocalTTL),
		misses: expirable.NewLRU[string, struct{}](100_000, nil, MissTTL)}
}

// Bearer extracts the key of an Authorization header; ok is false when there is none.
func Bearer(header string) (key string, ok bool) {
	scheme, key, found := strings.Cut(strings.TrimSpace(header), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", header != ""
	}
	return strings.TrimSpace(key), true
}

// Authenticate returns the principal of an Authorization header value.
func (a *Authenticator) Authenticate(ctx context.Context, header string) (*authn.Principal, error) {
	key, present := Bearer(header)
	switch {
	case !present:
		return nil, httpx.Unauthorized("an API key is required: Authorization: Bearer <api_key>")
	case key == "":
		return nil, httpx.Unauthorized("the Authorization header must read Bearer <api_key>")
	}
	if !apikey.Valid(key) {
		return nil, httpx.Unauthorized("the API key is malformed")
	}
	digest := apikey.Digest(key)
	if p, ok := a.local.Get(digest); ok {
		return p, nil
	}
	if a.misses.Contains(digest) {
		return nil, httpx.Unauthorized("the API key is not valid")
	}
	p, err := a.verifier.VerifyKey(ctx, digest)
	switch {
	case errors.Is(err, identity.ErrNotFound), errors.Is(err, identity.ErrRevoked):
		a.misses.Add(digest, struct{}{})
		return nil, httpx.Unauthorized("the API key is not valid")
	case err != nil:
		return nil, httpx.Unavailable(err)
	}
	a.local.Add(digest, p)
	return p, nil
}
