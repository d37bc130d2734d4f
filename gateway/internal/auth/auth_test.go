package auth

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
)

// countingVerifier stands in for identity-svc: it knows one digest and counts lookups.
type countingVerifier struct {
	digest string
	calls  atomic.Int64
}

func (v *countingVerifier) VerifyKey(_ context.Context, digest string) (*authn.Principal, error) {
	v.calls.Add(1)
	if digest != v.digest {
		return nil, identity.ErrNotFound
	}
	return &authn.Principal{ObjectID: "obj_1", KeyID: "key_1", Owner: true}, nil
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	key, digest := apikey.Generate(apikey.OwnerPrefix)
	unknown, _ := apikey.Generate(apikey.SubPrefix)
	v := &countingVerifier{digest: digest}
	a := New(v)
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
		if _, err := a.Authenticate(ctx, header); httpx.AsError(err).Code != httpx.CodeUnauthorized {
			t.Errorf("%s: err = %v, want UNAUTHORIZED", name, err)
		}
	}
	if n := v.calls.Load(); n != 0 {
		t.Fatalf("malformed keys caused %d lookups, want none", n)
	}
	// A key sent without its scheme is told how to send it, not called malformed.
	for _, header := range []string{key, "Basic " + key} {
		_, err := a.Authenticate(ctx, header)
		if msg := httpx.AsError(err).Message; !strings.Contains(msg, "Bearer <api_key>") {
			t.Errorf("%q: message %q, want one naming Bearer <api_key>", header, msg)
		}
	}
	if _, err := a.Authenticate(ctx, "Bearer "+unknown); httpx.AsError(err).Code != httpx.CodeUnauthorized {
		t.Errorf("unknown key: err = %v, want UNAUTHORIZED", err)
	}
	for range 3 {
		p, err := a.Authenticate(ctx, "Bearer "+key)
		if err != nil || p.ObjectID != "obj_1" {
			t.Fatalf("valid key: %v, %v", p, err)
		}
	}
	if n := v.calls.Load(); n != 2 {
		t.Fatalf("lookups = %d, want 2 (one unknown, one cached valid key)", n)
	}
	time.Sleep(LocalTTL + 100*time.Millisecond)
	if _, err := a.Authenticate(ctx, "Bearer "+key); err != nil {
		t.Fatal(err)
	}
	if n := v.calls.Load(); n != 3 {
		t.Fatalf("after the local TTL lookups = %d, want 3: the local cache must expire", n)
	}
}

func BenchmarkAuthenticateCached(b *testing.B) {
	key, digest := apikey.Generate(apikey.OwnerPrefix)
	a := New(&countingVerifier{digest: digest})
	header := "Bearer " + key
	ctx := context.Background()
	if _, err := a.Authenticate(ctx, header); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Authenticate(ctx, header); err != nil {
			b.Fatal(err)
		}
	}
}
