// Package auth turns a bearer API key into a principal: the checksum is checked with no lookup,
// then an in-process cache, then Redis, then identity-svc. A revocation is counted in Redis
// before it is answered, and each request reads the count, so a revoked key is refused from the
// revocation's answer on, on every replica; it is also pushed to every replica (Redis pub/sub),
// which drops the key from its in-process cache, and the cache's short lifetime bounds how long
// a replica that can neither read the count nor hear the announcement trusts a revoked key.
package auth

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
)

// LocalTTL bounds how long a replica trusts a principal without asking Redis. Revocations are
// pushed to every replica (Listen), so this only matters when an announcement is lost.
const LocalTTL = 500 * time.Millisecond

// MissTTL is how long a replica remembers that a key is unknown or revoked, so that a client
// repeating a bad key costs identity-svc one lookup per MissTTL. A key is random and unknown
// until it is created, and a revoked key never comes back, so a miss cannot turn into a hit.
const MissTTL = 10 * time.Second

// Verifier is what the authenticator needs of identity-svc's client: the Redis-cached principal
// (no work for identity-svc), and the lookup at identity-svc.
type Verifier interface {
	CachedKey(ctx context.Context, digest string) (*authn.Principal, error)
	LookupKey(ctx context.Context, digest string) (*authn.Principal, error)
}

// RevocationCounter tells how many key revocations were made (identity.Client.Revocations): a
// verifier that implements it makes every revocation bind at its answer on every replica.
type RevocationCounter interface {
	Revocations(ctx context.Context) (int64, error)
}

// Charge takes one unit of the calling client's failed-authentication budget: it is asked
// before anything a bad key could make costly (a lookup at identity-svc) and for every refused
// key, and answers 429 once the budget is spent. A key that verifies from a cache never
// charges it, so a flood of bad keys from one address cannot lock out a good key from it.
type Charge func(ctx context.Context) error

// Authenticator verifies keys.
type Authenticator struct {
	verifier Verifier
	local    *expirable.LRU[string, *authn.Principal]
	misses   *expirable.LRU[string, struct{}]
	// revoked counts the revocations this replica heard: a principal read before one is not
	// cached after it, since it may be the revoked key's.
	revoked atomic.Uint64
	// counter, when the verifier has it, is read on each request: counted is the count this
	// replica last saw, and a higher one forgets every cached principal (see fresh).
	counter RevocationCounter
	counted atomic.Int64
	// tokens, when set, verifies OAuth access tokens (see AcceptTokens).
	tokens AccessTokens
}

// New returns an authenticator over verifier.
func New(verifier Verifier) *Authenticator {
	a := &Authenticator{verifier: verifier, local: expirable.NewLRU[string, *authn.Principal](100_000, nil, LocalTTL),
		misses: expirable.NewLRU[string, struct{}](100_000, nil, MissTTL)}
	a.counter, _ = verifier.(RevocationCounter)
	return a
}

// fresh forgets every cached principal when a revocation was made since this replica last
// looked, whether or not its announcement arrived yet: identity-svc counts a revocation before
// it answers, so a request that starts after the answer never meets the revoked key's cached
// principal, on any replica. When Redis cannot be read, no revocation can be written either,
// and the announcements and LocalTTL bound what was written before.
func (a *Authenticator) fresh(ctx context.Context) {
	if a.counter == nil {
		return
	}
	n, err := a.counter.Revocations(ctx)
	if err != nil {
		return
	}
	if seen := a.counted.Load(); n != seen && a.counted.CompareAndSwap(seen, n) {
		a.Forget()
	}
}

// Bearer extracts the key of an Authorization header; ok is false when there is none.
func Bearer(header string) (key string, ok bool) {
	scheme, key, found := strings.Cut(strings.TrimSpace(header), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", header != ""
	}
	return strings.TrimSpace(key), true
}

// Authenticate returns the principal of an Authorization header value; charge is the calling
// client's failed-authentication budget (see Charge).
func (a *Authenticator) Authenticate(ctx context.Context, header string, charge Charge) (*authn.Principal, error) {
	key, present := Bearer(header)
	switch {
	case !present:
		return nil, httpx.Unauthorized("an API key is required: Authorization: Bearer <api_key>")
	case key == "":
		return nil, httpx.Unauthorized("the Authorization header must read Bearer <api_key>")
	}
	if a.tokens != nil && IsAccessToken(key) {
		return a.authenticateToken(ctx, key, charge)
	}
	if !apikey.Valid(key) {
		return nil, refuse(ctx, charge, "the API key is malformed")
	}
	return a.ByDigest(ctx, apikey.Digest(key), charge)
}

// ByDigest returns the principal of a key digest: the path every key takes once its checksum
// held, and the one an OAuth access token takes with the digest of its grant's sub-key, so that
// both are answered from the same caches and refused by the same revocations.
func (a *Authenticator) ByDigest(ctx context.Context, digest string, charge Charge) (*authn.Principal, error) {
	a.fresh(ctx)
	if p, ok := a.local.Get(digest); ok {
		return p, nil
	}
	if a.misses.Contains(digest) {
		return nil, refuse(ctx, charge, "the API key is not valid")
	}
	seen := a.revoked.Load()
	p, err := a.verifier.CachedKey(ctx, digest)
	looked := errors.Is(err, identity.ErrNotCached)
	if looked {
		// Only now can the key cost identity-svc work: the client's budget pays for it first
		// (once: a key the lookup refuses is not charged again).
		if err := charge(ctx); err != nil {
			return nil, err
		}
		p, err = a.verifier.LookupKey(ctx, digest)
	}
	switch {
	case errors.Is(err, identity.ErrNotFound), errors.Is(err, identity.ErrRevoked):
		a.misses.Add(digest, struct{}{})
		if looked {
			return nil, httpx.Unauthorized("the API key is not valid")
		}
		return nil, refuse(ctx, charge, "the API key is not valid")
	case err != nil:
		return nil, httpx.Unavailable(err)
	}
	if a.revoked.Load() == seen {
		a.local.Add(digest, p)
	}
	return p, nil
}

// refuse charges the client's budget for a refused key: 401 while it lasts, then 429.
func refuse(ctx context.Context, charge Charge, message string) error {
	if err := charge(ctx); err != nil {
		return err
	}
	return httpx.Unauthorized(message)
}

// Revoked drops a revoked key (by digest) from the in-process cache and remembers it as a miss.
func (a *Authenticator) Revoked(digest string) {
	a.revoked.Add(1)
	a.local.Remove(digest)
	a.misses.Add(digest, struct{}{})
}

// Forget drops every cached principal: after the announcements were interrupted, one may have
// been missed.
func (a *Authenticator) Forget() {
	a.revoked.Add(1)
	a.local.Purge()
}
