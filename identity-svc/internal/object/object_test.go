package object

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svcdev/svc/identity-svc/internal/payment"
	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
)

func ptr[T any](v T) *T { return &v }

// create makes an object and returns it with the caller its owner key makes.
func create(t *testing.T, s *Service, in NewObject) (*Created, Caller) {
	t.Helper()
	ctx := context.Background()
	c, err := s.Create(ctx, "req_test", in)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	p, err := s.VerifyKey(ctx, apikey.Digest(c.APIKey))
	if err != nil {
		t.Fatalf("verify the new owner key: %v", err)
	}
	return c, Caller{ObjectID: p.ObjectID, KeyID: p.KeyID, Hash: p.Hash}
}

// wantStatus fails unless err is an *httpx.Error with status and code.
func wantStatus(t *testing.T, err error, status int, code string) {
	t.Helper()
	var he *httpx.Error
	if !errors.As(err, &he) || he.Status != status || he.Code != code {
		t.Fatalf("got error %v, want %d %s", err, status, code)
	}
}

func TestCreateStoresObjectKeyAndEvent(t *testing.T) {
	t.Parallel()
	s, relay := newService(t)
	ctx := context.Background()
	c, caller := create(t, s, NewObject{InitialLLMTxt: "# Ada\nhello", Visibility: ptr(contract.Private)})
	if !apikey.IsOwnerKey(c.APIKey) || !apikey.ValidHash(c.Object.Hash) {
		t.Fatalf("created key %q hash %q", c.APIKey, c.Object.Hash)
	}
	got, err := s.ByHash(ctx, c.Object.Hash)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != caller.ObjectID || got.Visibility != contract.Private || got.MailboxStatus != StatusUnclaimed || got.Version != 1 || got.Title != "Ada" {
		t.Fatalf("stored object %+v", got)
	}
	if !slices.Equal(relay.types(), []string{events.ObjectCreated}) {
		t.Fatalf("events %v, want object.created", relay.types())
	}
}

func TestCreateRefusesBadInput(t *testing.T) {
	t.Parallel()
	s, relay := newService(t)
	for name, tc := range map[string]struct {
		in     NewObject
		status int
		code   string
	}{
		"visibility":       {NewObject{Visibility: ptr(contract.Visibility("secret"))}, 400, httpx.CodeInvalidVisibility},
		"empty visibility": {NewObject{Visibility: ptr(contract.Visibility(""))}, 400, httpx.CodeInvalidVisibility},
		"too large":        {NewObject{InitialLLMTxt: strings.Repeat("a", httpx.MaxTextBytes+1)}, http.StatusRequestEntityTooLarge, httpx.CodePayloadTooLarge},
		"rules":            {NewObject{Rules: json.RawMessage(`"nope"`)}, 400, ""},
	} {
		_, err := s.Create(context.Background(), "req_test", tc.in)
		var he *httpx.Error
		if !errors.As(err, &he) || he.Status != tc.status || (tc.code != "" && he.Code != tc.code) {
			t.Errorf("%s: got %v, want %d %s", name, err, tc.status, tc.code)
		}
	}
	if len(relay.types()) != 0 {
		t.Fatalf("refused creations published %v", relay.types())
	}
}

func TestRotateReplacesTheOwnerKey(t *testing.T) {
	t.Parallel()
	s, relay := newService(t)
	ctx := context.Background()
	c, caller := create(t, s, NewObject{})
	r, err := s.Rotate(ctx, "req_test", caller)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.VerifyKey(ctx, apikey.Digest(c.APIKey))
	wantStatus(t, err, 404, httpx.CodeNotFound)
	p, err := s.VerifyKey(ctx, apikey.Digest(r.APIKey))
	if err != nil || !p.Owner || p.KeyID != r.KeyID {
		t.Fatalf("new owner key verifies as %+v, %v", p, err)
	}
	if tomb, _ := s.Redis.Get(ctx, "svc:key:"+apikey.Digest(c.APIKey)).Result(); tomb == "" {
		t.Fatal("no tombstone for the rotated-away key")
	}
	if !slices.Contains(relay.types(), events.KeyRotated) {
		t.Fatalf("events %v lack key.rotated", relay.types())
	}
}

func TestSubKeys(t *testing.T) {
	t.Parallel()
	s, _ := newService(t)
	ctx := context.Background()
	_, caller := create(t, s, NewObject{})
	_, _, err := s.CreateKey(ctx, "req_test", caller, NewKey{Scopes: []string{}})
	wantStatus(t, err, 400, httpx.CodeInvalidRequest)
	_, _, err = s.CreateKey(ctx, "req_test", caller, NewKey{Scopes: []string{"admin"}})
	wantStatus(t, err, 400, httpx.CodeInvalidRequest)
	k, key, err := s.CreateKey(ctx, "req_test", caller, NewKey{Label: "ci", Scopes: []string{"read", "read"}})
	if err != nil || !slices.Equal(k.Scopes, []string{"read"}) {
		t.Fatalf("create key: %+v, %v", k, err)
	}
	if _, err := s.VerifyKey(ctx, apikey.Digest(key)); err != nil {
		t.Fatalf("sub-key does not verify: %v", err)
	}
	list, _, err := s.SubKeys(ctx, caller.ObjectID, store.Page{Limit: 10})
	if err != nil || len(list) != 1 || list[0].LastUsedAt == nil {
		t.Fatalf("sub-keys %+v, %v (want one, used once)", list, err)
	}
	if err := s.RevokeKey(ctx, "req_test", caller, k.KeyID); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, s.RevokeKey(ctx, "req_test", caller, k.KeyID), 404, httpx.CodeNotFound)
	if list, _, _ := s.SubKeys(ctx, caller.ObjectID, store.Page{Limit: 10}); len(list) != 0 {
		t.Fatalf("revoked key still listed: %+v", list)
	}
}

func TestCustomHash(t *testing.T) {
	t.Parallel()
	s, relay := newService(t)
	ctx := context.Background()
	c, caller := create(t, s, NewObject{})
	_, other := create(t, s, NewObject{})
	vouchers := payment.NewVouchers(voucherSecret)
	voucher := vouchers.Issue()

	_, err := s.ClaimCustomHash(ctx, "req_test", caller.ObjectID, HashClaim{Username: "Ada", PaymentReference: voucher})
	wantStatus(t, err, 400, httpx.CodeInvalidUsername)
	_, err = s.ClaimCustomHash(ctx, "req_test", caller.ObjectID, HashClaim{Username: "ada"})
	wantStatus(t, err, http.StatusPaymentRequired, httpx.CodePaymentRequired)
	r, err := s.ClaimCustomHash(ctx, "req_test", caller.ObjectID, HashClaim{Username: "ada", PaymentReference: voucher})
	if err != nil || r.Hash != "svc_ada" || r.PreviousHash != c.Object.Hash || !r.Paid {
		t.Fatalf("claim: %+v, %v", r, err)
	}
	for _, h := range []string{c.Object.Hash, "svc_ada"} {
		if o, err := s.ByHash(ctx, h); err != nil || o.Hash != "svc_ada" {
			t.Fatalf("%s resolves to %+v, %v", h, o, err)
		}
	}
	_, err = s.ClaimCustomHash(ctx, "req_test", other.ObjectID, HashClaim{Username: "grace", PaymentReference: voucher})
	wantStatus(t, err, http.StatusPaymentRequired, httpx.CodePaymentRequired)
	// A taken name gives its voucher back.
	second := vouchers.Issue()
	_, err = s.ClaimCustomHash(ctx, "req_test", other.ObjectID, HashClaim{Username: "ada", PaymentReference: second})
	wantStatus(t, err, 409, httpx.CodeHashTaken)
	if _, err := s.ClaimCustomHash(ctx, "req_test", other.ObjectID, HashClaim{Username: "grace", PaymentReference: second}); err != nil {
		t.Fatalf("the voucher of a refused claim was not given back: %v", err)
	}
	if n := strings.Count(strings.Join(relay.types(), ","), events.ObjectHashChanged); n != 2 {
		t.Fatalf("%d hash-change events, want 2", n)
	}
}

func TestVerifiedSocialClaimMakesCustomHashFree(t *testing.T) {
	t.Parallel()
	s, _ := newService(t)
	ctx := context.Background()
	_, caller := create(t, s, NewObject{})
	_, other := create(t, s, NewObject{})
	verify := func(objectID, id, network, handle string) {
		t.Helper()
		if err := s.RecordClaim(ctx, objectID, VerifiedClaim{ClaimID: id, Network: network, Handle: handle, At: clock.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	verify(caller.ObjectID, "clm_gh", "github", "octocat")
	// A federated handle, a domain and a lapsed claim never make a name free.
	verify(other.ObjectID, "clm_m", "mastodon", "openai@social.example")
	verify(other.ObjectID, "clm_m2", "mastodon", "openai")
	verify(other.ObjectID, "clm_d", "domain", "openai")
	verify(other.ObjectID, "clm_x", "x", "grace")
	if err := s.RecordLapse(ctx, other.ObjectID, "clm_x", clock.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"octocat", "openai", "grace"} {
		_, err := s.ClaimCustomHash(ctx, "req_test", other.ObjectID, HashClaim{Username: name})
		wantStatus(t, err, 402, httpx.CodePaymentRequired)
	}
	r, err := s.ClaimCustomHash(ctx, "req_test", caller.ObjectID, HashClaim{Username: "octocat"})
	if err != nil || r.Paid || r.Hash != "svc_octocat" {
		t.Fatalf("free claim: %+v, %v", r, err)
	}
}

func TestClaimAndLapseFoldIntoMailboxStatus(t *testing.T) {
	t.Parallel()
	s, _ := newService(t)
	ctx := context.Background()
	_, caller := create(t, s, NewObject{})
	claim := VerifiedClaim{ClaimID: "clm_1", Network: "github", Handle: "octocat"}
	for range 2 { // idempotent
		if err := s.RecordClaim(ctx, caller.ObjectID, claim); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RecordClaim(ctx, "obj_unknown", claim); err != nil {
		t.Fatalf("a claim of an unknown object: %v", err)
	}
	if err := s.RecordLapse(ctx, "obj_unknown", "clm_1", clock.Now()); err != nil {
		t.Fatalf("a lapse of an unknown object: %v", err)
	}
	o, err := s.ByID(ctx, caller.ObjectID)
	if err != nil || o.MailboxStatus != StatusClaimed || len(o.SocialHandles) != 1 {
		t.Fatalf("after the claim: %+v, %v", o, err)
	}
	for range 2 { // idempotent
		if err := s.RecordLapse(ctx, caller.ObjectID, "clm_1", clock.Now()); err != nil {
			t.Fatal(err)
		}
	}
	o, err = s.ByID(ctx, caller.ObjectID)
	if err != nil || o.MailboxStatus != StatusUnclaimed || len(o.SocialHandles) != 0 {
		t.Fatalf("after the lapse: %+v, %v", o, err)
	}
}

func TestAssociations(t *testing.T) {
	t.Parallel()
	s, relay := newService(t)
	ctx := context.Background()
	_, caller := create(t, s, NewObject{})
	peer, _ := create(t, s, NewObject{})
	_, err := s.Associate(ctx, "req_test", caller, NewAssociation{PeerHash: "not a hash"})
	wantStatus(t, err, 400, httpx.CodeInvalidRequest)
	_, err = s.Associate(ctx, "req_test", caller, NewAssociation{PeerHash: apikey.NewHash()})
	wantStatus(t, err, 404, httpx.CodeNotFound)
	a, err := s.Associate(ctx, "req_test", caller, NewAssociation{PeerHash: peer.Object.Hash, Role: "friend"})
	if err != nil {
		t.Fatal(err)
	}
	list, _, err := s.Associations(ctx, caller.ObjectID, store.Page{Limit: 10})
	if err != nil || len(list) != 1 || list[0].ID != a.ID {
		t.Fatalf("associations %+v, %v", list, err)
	}
	if err := s.Dissociate(ctx, caller, a.ID); err != nil {
		t.Fatal(err)
	}
	wantStatus(t, s.Dissociate(ctx, caller, a.ID), 404, httpx.CodeNotFound)
	if list, _, _ := s.Associations(ctx, caller.ObjectID, store.Page{Limit: 10}); len(list) != 0 {
		t.Fatalf("deleted association still listed: %+v", list)
	}
	if !slices.Contains(relay.types(), events.AssociationCreated) {
		t.Fatalf("events %v lack association.created", relay.types())
	}
}

func TestReportProfileNeverGoesBackwards(t *testing.T) {
	t.Parallel()
	s, _ := newService(t)
	ctx := context.Background()
	_, caller := create(t, s, NewObject{})
	for _, v := range []int{3, 2} {
		if err := s.ReportProfile(ctx, caller.ObjectID, contract.ProfileUpdate{Version: v, Title: "v" + string(rune('0'+v))}); err != nil {
			t.Fatal(err)
		}
	}
	o, err := s.ByID(ctx, caller.ObjectID)
	if err != nil || o.Version != 3 || o.Title != "v3" {
		t.Fatalf("after versions 3 then 2: %+v, %v", o, err)
	}
}

func TestDirectory(t *testing.T) {
	t.Parallel()
	s, _ := newService(t)
	ctx := context.Background()
	create(t, s, NewObject{InitialLLMTxt: "# Visible one"})
	create(t, s, NewObject{InitialLLMTxt: "# Hidden one", Visibility: ptr(contract.Private)})
	_, claimed := create(t, s, NewObject{InitialLLMTxt: "# Claimed one"})
	if err := s.RecordClaim(ctx, claimed.ObjectID, VerifiedClaim{ClaimID: "clm_d"}); err != nil {
		t.Fatal(err)
	}
	titles := func(q DirectoryQuery) []string {
		t.Helper()
		objs, _, err := s.Directory(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range objs {
			out = append(out, o.Title)
		}
		return out
	}
	if got := titles(DirectoryQuery{Limit: 10}); !slices.Equal(got, []string{"Claimed one", "Visible one"}) {
		t.Fatalf("directory %v", got)
	}
	if got := titles(DirectoryQuery{Limit: 10, Q: "ONE", Status: "verified"}); !slices.Equal(got, []string{"Claimed one"}) {
		t.Fatalf("verified search %v", got)
	}
	if got := titles(DirectoryQuery{Limit: 10, Q: "hidden"}); len(got) != 0 {
		t.Fatalf("search found a private object: %v", got)
	}
	objs, next, err := s.Directory(ctx, DirectoryQuery{Limit: 1})
	if err != nil || len(objs) != 1 || next == "" {
		t.Fatalf("first page %d objects, next %v, %v", len(objs), next, err)
	}
	_, _, err = s.Directory(ctx, DirectoryQuery{Limit: 1, Status: "gone"})
	wantStatus(t, err, 400, httpx.CodeInvalidRequest)
}

func TestPrivateObjectIsReadOnlyByItsOwner(t *testing.T) {
	t.Parallel()
	s, _ := newService(t)
	ctx := context.Background()
	c, owner := create(t, s, NewObject{Visibility: ptr(contract.Private)})
	_, other := create(t, s, NewObject{})
	for _, viewer := range []string{"", other.ObjectID} {
		_, err := s.Read(ctx, c.Object.Hash, viewer)
		wantStatus(t, err, 404, httpx.CodeNotFound)
	}
	if _, err := s.Read(ctx, c.Object.Hash, owner.ObjectID); err != nil {
		t.Fatalf("the owner cannot read its private object: %v", err)
	}
	_, err := s.Associate(ctx, "req_test", other, NewAssociation{PeerHash: c.Object.Hash})
	wantStatus(t, err, 404, httpx.CodeNotFound)
}
