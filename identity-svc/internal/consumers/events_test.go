package consumers_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/svcdev/svc/identity-svc/internal/consumers"
	"github.com/svcdev/svc/identity-svc/internal/object"
	"github.com/svcdev/svc/identity-svc/internal/payment"
	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/service"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// confirmed is an outbox that keeps nothing: these tests read what the use cases stored.
type confirmed struct{}

func (confirmed) Stage(context.Context, string, any, ...events.Pending) error { return nil }
func (confirmed) Keep(context.Context, ...string) error                       { return nil }
func (confirmed) Confirm(...events.Pending)                                   {}

// newObjects returns identity-svc's use cases over a database of the test's own, on the embedded
// backends, with no other service.
func newObjects(t *testing.T) *object.Service {
	t.Helper()
	env := testkit.Backends(t)
	db := testkit.Database(t, env, "identity")
	ctx := context.Background()
	if err := mongox.EnsureIndexes(ctx, db, append(store.Indexes, events.OutboxIndexes...)); err != nil {
		t.Fatal(err)
	}
	rdb, err := service.ConnectRedis(ctx, env.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	sealer, err := object.NewSealer(strings.Repeat("cd", 32))
	if err != nil {
		t.Fatal(err)
	}
	return &object.Service{Store: store.New(db), Outbox: confirmed{}, Redis: rdb, Payments: payment.NewVouchers("test-voucher-secret"),
		Log: testkit.Logger(t), ETags: httpx.NewETags(rdb, testkit.Logger(t), time.Hour), Sealer: sealer}
}

// deliver hands an event claims-svc published to the consumer as the broker carries it.
func deliver(t *testing.T, h *consumers.Claims, p events.Pending) error {
	t.Helper()
	var ev events.Event
	if err := json.Unmarshal([]byte(p.Payload), &ev); err != nil {
		t.Fatal(err)
	}
	return h.Handle(context.Background(), ev)
}

func verified(o *store.Object, claimID, proof, target string) events.Pending {
	return events.MustNew(events.TopicClaims, events.ClaimVerified, o.ID, o.Hash, "req_claim",
		contract.ClaimVerifiedData{ClaimID: claimID, ProofType: proof, ClaimedTarget: target, VerifiedAt: "2026-01-02T00:00:00.000Z"})
}

func lapsed(o *store.Object, claimID, proof, target string) events.Pending {
	return events.MustNew(events.TopicClaims, events.ClaimLapsed, o.ID, o.Hash, "req_claim",
		contract.ClaimLapsedData{ClaimID: claimID, ProofType: proof, ClaimedTarget: target, LapsedAt: "2026-01-03T00:00:00.000Z"})
}

// TestClaimEventsDecideMailboxStatusAndFreeHashes: identity-svc learns claims only from
// claims-svc's events, and answers from the facts they leave: the object's mailbox_status, and
// which custom hash is free to it (the handle of its verified social claim). Redeliveries change
// nothing; a lapse takes both back; a malformed event is a dead letter at once.
func TestClaimEventsDecideMailboxStatusAndFreeHashes(t *testing.T) {
	t.Parallel()
	s := newObjects(t)
	h := &consumers.Claims{Objects: s}
	ctx := context.Background()
	create := func() *store.Object {
		t.Helper()
		c, err := s.Create(ctx, "req_test", object.NewObject{})
		if err != nil {
			t.Fatal(err)
		}
		return c.Object
	}
	status := func(o *store.Object) string {
		t.Helper()
		got, err := s.ByID(ctx, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.MailboxStatus
	}
	feed := func(evs ...events.Pending) {
		t.Helper()
		for _, ev := range evs {
			if err := deliver(t, h, ev); err != nil {
				t.Fatalf("Handle(%s): %v", ev.Type, err)
			}
		}
	}
	ada, grace := create(), create()
	if status(ada) != object.StatusUnclaimed {
		t.Fatalf("a new object is %s, want unclaimed", status(ada))
	}

	claim := verified(ada, "clm_gh", "github", "https://github.com/OctoCat")
	feed(claim, claim /* redelivered */, verified(grace, "clm_d", "domain", "octo.example"))
	if status(ada) != object.StatusClaimed || status(grace) != object.StatusClaimed {
		t.Fatalf("after claim.verified: %s and %s, want both claimed", status(ada), status(grace))
	}
	// The verified github handle is ada's to take for free, never grace's (a domain claim frees
	// no name).
	if r, err := s.ClaimCustomHash(ctx, "req_test", grace.ID, object.HashClaim{Username: "octocat"}); err == nil {
		t.Fatalf("grace took ada's handle: %+v", r)
	}
	r, err := s.ClaimCustomHash(ctx, "req_test", ada.ID, object.HashClaim{Username: "octocat"})
	if err != nil || r.Paid || r.Hash != "svc_octocat" {
		t.Fatalf("ada's free custom hash: %+v, %v; want svc_octocat unpaid", r, err)
	}

	feed(lapsed(grace, "clm_d", "domain", "octo.example"), lapsed(grace, "clm_d", "domain", "octo.example"))
	if status(grace) != object.StatusUnclaimed || status(ada) != object.StatusClaimed {
		t.Fatalf("after grace's lapse: grace %s, ada %s; want unclaimed and claimed", status(grace), status(ada))
	}
	// Events of objects identity-svc does not know, and of other types, change nothing.
	feed(verified(&store.Object{ID: "obj_unknown", Hash: "svc_unknown"}, "clm_u", "github", "nobody"),
		events.MustNew(events.TopicClaims, "claim.created", ada.ID, ada.Hash, "req", map[string]string{}))

	for _, ev := range []events.Event{
		{ID: "evt_bad1", Type: events.ClaimVerified, ObjectID: ada.ID, Data: json.RawMessage(`"not an object"`)},
		{ID: "evt_bad2", Type: events.ClaimLapsed, ObjectID: ada.ID, Data: json.RawMessage(`[1]`)},
	} {
		if err := h.Handle(ctx, ev); !events.IsPermanent(err) {
			t.Errorf("Handle(%s %s) = %v, want a permanent error", ev.Type, ev.Data, err)
		}
	}
}

// TestContextEventsRecordProfileVersions: a context.updated event records the version and title
// the object read shows, once; an older version delivered late never replaces a newer one.
func TestContextEventsRecordProfileVersions(t *testing.T) {
	t.Parallel()
	s := newObjects(t)
	h := &consumers.Profiles{Objects: s}
	ctx := context.Background()
	c, err := s.Create(ctx, "req_test", object.NewObject{InitialLLMTxt: "# First"})
	if err != nil {
		t.Fatal(err)
	}
	o := c.Object
	feed := func(version int, title string) {
		t.Helper()
		p := events.MustNew(events.TopicContext, events.ContextUpdated, o.ID, o.Hash, "req_ctx",
			contract.ContextUpdatedData{Version: version, UpdatedAt: "2026-01-02T00:00:00.000Z", Title: title, Change: "llm_txt"})
		var ev events.Event
		if err := json.Unmarshal([]byte(p.Payload), &ev); err != nil {
			t.Fatal(err)
		}
		if err := h.Handle(ctx, ev); err != nil {
			t.Fatalf("Handle(version %d): %v", version, err)
		}
	}
	feed(3, "Third")
	feed(3, "Third") // redelivered
	feed(2, "Second")
	got, err := s.ByID(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 3 || got.Title != "Third" {
		t.Fatalf("object after versions 3, 3 and 2: version %d title %q, want 3 Third", got.Version, got.Title)
	}
}
