package auth

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
)

// countingVerifier stands in for identity-svc and its Redis cache: it knows one digest, holds
// the digests in cached, and counts lookups (the work a bad key could cost identity-svc).
type countingVerifier struct {
	digest string
	cached map[string]bool
	calls  atomic.Int64
}

func (v *countingVerifier) CachedKey(_ context.Context, digest string) (*authn.Principal, error) {
	if !v.cached[digest] {
		return nil, identity.ErrNotCached
	}
	return v.principal(digest)
}

func (v *countingVerifier) LookupKey(_ context.Context, digest string) (*authn.Principal, error) {
	v.calls.Add(1)
	return v.principal(digest)
}

func (v *countingVerifier) principal(digest string) (*authn.Principal, error) {
	if digest != v.digest {
		return nil, identity.ErrNotFound
	}
	return &authn.Principal{ObjectID: "obj_1", KeyID: "key_1", Owner: true}, nil
}

// budget is a client's failed-authentication budget of n units.
type budget struct{ left, spent atomic.Int64 }

func newBudget(n int64) *budget {
	b := &budget{}
	b.left.Store(n)
	return b
}

func (b *budget) charge(context.Context) error {
	b.spent.Add(1)
	if b.left.Add(-1) < 0 {
		return httpx.Errorf(http.StatusTooManyRequests, httpx.CodeRateLimited, "rate limit exceeded (auth-ip): retry later")
	}
	return nil
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	key, digest := apikey.Generate(apikey.OwnerPrefix)
	unknown, _ := apikey.Generate(apikey.SubPrefix)
	v := &countingVerifier{digest: digest}
	a := New(v)
	b := newBudget(1000)
	ctx := context.Background()
	// A mistyped last character: always a different one, so the checksum really is wrong.
	last := "0"
	if strings.HasSuffix(key, "0") {
		last = "1"
	}

	for name, header := range map[string]string{
		"missing": "", "not bearer": "Basic " + key, "malformed": "Bearer svc_sk_short",
		"bad checksum": "Bearer " + key[:len(key)-1] + last,
	} {
		if _, err := a.Authenticate(ctx, header, b.charge); httpx.AsError(err).Code != httpx.CodeUnauthorized {
			t.Errorf("%s: err = %v, want UNAUTHORIZED", name, err)
		}
	}
	if n := v.calls.Load(); n != 0 {
		t.Fatalf("malformed keys caused %d lookups, want none", n)
	}
	// A key sent without its scheme is told how to send it, not called malformed.
	for _, header := range []string{key, "Basic " + key} {
		_, err := a.Authenticate(ctx, header, b.charge)
		if msg := httpx.AsError(err).Message; !strings.Contains(msg, "Bearer <api_key>") {
			t.Errorf("%q: message %q, want one naming Bearer <api_key>", header, msg)
		}
	}
	for range 3 { // a known miss is not looked up again
		if _, err := a.Authenticate(ctx, "Bearer "+unknown, b.charge); httpx.AsError(err).Code != httpx.CodeUnauthorized {
			t.Errorf("unknown key: err = %v, want UNAUTHORIZED", err)
		}
	}
	for range 3 {
		p, err := a.Authenticate(ctx, "Bearer "+key, b.charge)
		if err != nil || p.ObjectID != "obj_1" {
			t.Fatalf("valid key: %v, %v", p, err)
		}
	}
	if n := v.calls.Load(); n != 2 {
		t.Fatalf("lookups = %d, want 2 (one unknown, one cached valid key)", n)
	}
	time.Sleep(LocalTTL + 100*time.Millisecond)
	if _, err := a.Authenticate(ctx, "Bearer "+key, b.charge); err != nil {
		t.Fatal(err)
	}
	if n := v.calls.Load(); n != 3 {
		t.Fatalf("after the local TTL lookups = %d, want 3: the local cache must expire", n)
	}
}

// TestBadKeysCannotLockOutAGoodKey: once a client's budget is spent on unknown keys, its next
// unknown keys are refused with 429 and cost no lookup, while a key cached in Redis still works
// from the same client.
func TestBadKeysCannotLockOutAGoodKey(t *testing.T) {
	t.Parallel()
	key, digest := apikey.Generate(apikey.OwnerPrefix)
	v := &countingVerifier{digest: digest, cached: map[string]bool{digest: true}}
	a := New(v)
	b := newBudget(10)
	ctx := context.Background()
	var refused int
	for range 700 {
		bad, _ := apikey.Generate(apikey.OwnerPrefix)
		_, err := a.Authenticate(ctx, "Bearer "+bad, b.charge)
		switch httpx.AsError(err).Code {
		case httpx.CodeRateLimited:
			refused++
		case httpx.CodeUnauthorized:
		default:
			t.Fatalf("unknown key: %v", err)
		}
	}
	if n := v.calls.Load(); n > 10 || refused < 690 {
		t.Fatalf("%d lookups and %d refusals for 700 unknown keys on a budget of 10", n, refused)
	}
	if p, err := a.Authenticate(ctx, "Bearer "+key, b.charge); err != nil || p.ObjectID != "obj_1" {
		t.Fatalf("the good key after the flood: %v, %v", p, err)
	}
}

// TestRevokedDropsTheCachedPrincipal: an announced revocation is applied at once, and a principal
// read while one was announced is not cached.
func TestRevokedDropsTheCachedPrincipal(t *testing.T) {
	t.Parallel()
	key, digest := apikey.Generate(apikey.OwnerPrefix)
	v := &countingVerifier{digest: digest, cached: map[string]bool{digest: true}}
	a := New(v)
	b := newBudget(1000)
	ctx := context.Background()
	if _, err := a.Authenticate(ctx, "Bearer "+key, b.charge); err != nil {
		t.Fatal(err)
	}
	a.Revoked(digest)
	if _, err := a.Authenticate(ctx, "Bearer "+key, b.charge); httpx.AsError(err).Code != httpx.CodeUnauthorized {
		t.Fatalf("a revoked key: %v, want UNAUTHORIZED", err)
	}
}

func BenchmarkAuthenticateCached(b *testing.B) {
	key, digest := apikey.Generate(apikey.OwnerPrefix)
	a := New(&countingVerifier{digest: digest})
	header := "Bearer " + key
	ctx := context.Background()
	free := func(context.Context) error { return nil }
	if _, err := a.Authenticate(ctx, header, free); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Authenticate(ctx, header, free); err != nil {
			b.Fatal(err)
		}
	}
}

// countedVerifier is a countingVerifier that also holds the revocation count and tombstones,
// as identity-svc's Redis does.
type countedVerifier struct {
	countingVerifier
	revocations atomic.Int64
	revoked     atomic.Bool
}

func (v *countedVerifier) Revocations(context.Context) (int64, error) {
	return v.revocations.Load(), nil
}

func (v *countedVerifier) CachedKey(ctx context.Context, digest string) (*authn.Principal, error) {
	if v.revoked.Load() {
		return nil, identity.ErrRevoked
	}
	return v.countingVerifier.CachedKey(ctx, digest)
}

// TestRevocationBindsBeforeItsAnnouncement: a revocation counted in Redis (before identity-svc
// answers it) refuses the key on a replica that keeps its principal in memory and has not heard
// the announcement yet.
func TestRevocationBindsBeforeItsAnnouncement(t *testing.T) {
	t.Parallel()
	key, digest := apikey.Generate(apikey.OwnerPrefix)
	v := &countedVerifier{countingVerifier: countingVerifier{digest: digest, cached: map[string]bool{digest: true}}}
	v.revocations.Store(41)
	a := New(v)
	b := newBudget(1000)
	ctx := context.Background()
	for range 2 { // the second is answered from memory
		if _, err := a.Authenticate(ctx, "Bearer "+key, b.charge); err != nil {
			t.Fatal(err)
		}
	}
	v.revoked.Store(true) // the tombstone and the count, written together; no announcement
	v.revocations.Add(1)
	if _, err := a.Authenticate(ctx, "Bearer "+key, b.charge); httpx.AsError(err).Code != httpx.CodeUnauthorized {
		t.Fatalf("a key revoked before this request: %v, want UNAUTHORIZED", err)
	}
}
