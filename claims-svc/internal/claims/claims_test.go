package claims_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/claims-svc/internal/claims"
	"github.com/svcdev/svc/claims-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/outbound"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// objects stands in for identity-svc's resolution of hashes.
type objects map[string]identity.Object

func (o objects) Resolve(_ context.Context, hash string) (*identity.Object, error) {
	obj, ok := o[hash]
	if !ok {
		return nil, identity.ErrNotFound
	}
	return &obj, nil
}

// proofs stands in for the outside world: the outcome every check sees, and how many looks.
type proofs struct {
	mu      sync.Mutex
	outcome string
	looks   atomic.Int64
}

func (p *proofs) set(outcome string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.outcome = outcome
}

func (p *proofs) Check(context.Context, *store.Claim) claims.Result {
	p.looks.Add(1)
	time.Sleep(5 * time.Millisecond) // a real look takes a while: replicas overlap
	p.mu.Lock()
	defer p.mu.Unlock()
	return claims.Result{Outcome: p.outcome, Reason: "seen " + p.outcome}
}

// confirmed counts the events handed to the relay of the real outbox.
type confirmed struct {
	*events.Outbox
	mu    sync.Mutex
	types []string
}

func (c *confirmed) Confirm(evs ...events.Pending) {
	c.mu.Lock()
	for _, e := range evs {
		c.types = append(c.types, e.Type)
	}
	c.mu.Unlock()
	c.Outbox.Confirm(evs...)
}

func (c *confirmed) count(eventType string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.types {
		if t == eventType {
			n++
		}
	}
	return n
}

type fixture struct {
	db     *mongo.Database
	svc    *claims.Service
	st     *store.Store
	proofs *proofs
	outbox *confirmed
}

// newFixture returns n services sharing one database, as replicas do.
func newFixture(t *testing.T, n int) []fixture {
	t.Helper()
	env := testkit.Backends(t)
	db := testkit.Database(t, env, "claims")
	if err := mongox.EnsureIndexes(context.Background(), db, store.Indexes); err != nil {
		t.Fatal(err)
	}
	p := &proofs{outcome: store.Match}
	dir := objects{"svc_ada": {ObjectID: "obj_a", Hash: "svc_ada", Visibility: "public"}}
	var out []fixture
	for range n {
		ob := &confirmed{Outbox: events.NewOutbox(db, nil, testkit.Logger(t), events.OutboxOptions{})}
		st := store.New(db)
		out = append(out, fixture{db: db, st: st, proofs: p, outbox: ob, svc: &claims.Service{
			Store: st, Identity: dir, Outbox: ob, Checker: p, ChallengeTTL: time.Hour, Log: testkit.Logger(t),
			Limiter: newLimiter(t, 8, 64),
		}})
	}
	return out
}

func newLimiter(t *testing.T, max, queue int) *outbound.Limiter {
	t.Helper()
	l, err := outbound.NewLimiter(outbound.LimiterOptions{Max: max, Queue: queue, Wait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestVerifyPastTheOutboundQueueIsRefused: while the process's outbound turns and queue are all
// taken, an owner's verification is a 503 with Retry-After that looks at no proof and records
// nothing; once a turn is free it verifies.
func TestVerifyPastTheOutboundQueueIsRefused(t *testing.T) {
	f := newFixture(t, 1)[0]
	f.svc.Limiter = newLimiter(t, 1, 0)
	ctx := context.Background()
	c, err := f.svc.Create(ctx, "obj_a", "svc_ada", claims.Domain, "busy.example.com")
	if err != nil {
		t.Fatal(err)
	}
	release, err := f.svc.Limiter.Acquire(ctx) // another fetch holds the only turn
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.Verify(ctx, "req", "obj_a", c.ID)
	var e *apierr.Error
	if !errors.As(err, &e) || e.Status != 503 || e.Code != apierr.CodeUnavailable || e.RetryAfter < time.Second {
		t.Fatalf("verify while busy = %v, want 503 UNAVAILABLE with Retry-After", err)
	}
	if n := f.proofs.looks.Load(); n != 0 {
		t.Fatalf("a refused verification looked at the proof %d times", n)
	}
	release()
	v, err := f.svc.Verify(ctx, "req", "obj_a", c.ID)
	if err != nil || v.Status != claims.Verified {
		t.Fatalf("verify once a turn is free = %+v, %v; want verified", v, err)
	}
}

func countStates(t *testing.T, st *store.Store, claimID string) int {
	t.Helper()
	states, err := st.CurrentStates(context.Background(), []string{claimID})
	if err != nil {
		t.Fatal(err)
	}
	return states[claimID].Gen
}

// TestConcurrentVerifyPublishesOnce: many verifications of one pending claim at once record one
// change of status and confirm one claim.verified.
func TestConcurrentVerifyPublishesOnce(t *testing.T) {
	f := newFixture(t, 1)[0]
	ctx := context.Background()
	c, err := f.svc.Create(ctx, "obj_a", "svc_ada", claims.Domain, "example.com")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			v, err := f.svc.Verify(ctx, "req", "obj_a", c.ID)
			if err != nil || v.ClaimStatus != claims.Verified {
				t.Errorf("verify = %+v, %v", v, err)
			}
		})
	}
	wg.Wait()
	if gen := countStates(t, f.st, c.ID); gen != 1 {
		t.Errorf("the claim's status changed %d times, want once", gen)
	}
	if n := f.outbox.count(events.ClaimVerified); n != 1 {
		t.Errorf("%d claim.verified confirmed, want 1", n)
	}
}

// TestLapseAfterThreeMismatchesInARow: unreachable looks neither count nor break a run, a match
// does; the third mismatch in a row lapses the claim once.
func TestLapseAfterThreeMismatchesInARow(t *testing.T) {
	f := newFixture(t, 1)[0]
	ctx := context.Background()
	c, err := f.svc.Create(ctx, "obj_a", "svc_ada", claims.Domain, "example.com")
	if err != nil {
		t.Fatal(err)
	}
	verify := func(outcome string) string {
		t.Helper()
		f.proofs.set(outcome)
		v, err := f.svc.Verify(ctx, "req", "obj_a", c.ID)
		if err != nil {
			t.Fatal(err)
		}
		return v.ClaimStatus
	}
	verify(store.Match)
	for i, o := range []string{store.Mismatch, store.Unreachable, store.Mismatch, store.Match, store.Mismatch, store.Unreachable, store.Unreachable, store.Mismatch} {
		if s := verify(o); s != claims.Verified {
			t.Fatalf("look %d (%s): claim is %s, want still verified", i, o, s)
		}
	}
	if s := verify(store.Mismatch); s != claims.Lapsed {
		t.Fatalf("third mismatch in a row: claim is %s, want lapsed", s)
	}
	if s := verify(store.Mismatch); s != claims.Lapsed || f.outbox.count(events.ClaimLapsed) != 1 {
		t.Fatalf("after the lapse: %s with %d claim.lapsed", s, f.outbox.count(events.ClaimLapsed))
	}
	got, err := f.svc.Get(ctx, "obj_a", c.ID)
	if err != nil || got.LastCheck == nil || got.LastCheck.Outcome != store.Mismatch || got.LastCheckedAt == nil {
		t.Fatalf("claim = %+v, %v", got, err)
	}
}

// TestRecheckOncePerPeriodAcrossReplicas runs the scheduled re-check on three replicas at once:
// each verified claim is looked at once per period.
func TestRecheckOncePerPeriodAcrossReplicas(t *testing.T) {
	fs := newFixture(t, 3)
	ctx := context.Background()
	const period = 2 * time.Second
	for _, f := range fs {
		f.svc.RecheckInterval = period
	}
	var ids []string
	for _, target := range []string{"a.example.com", "b.example.com"} {
		c, err := fs[0].svc.Create(ctx, "obj_a", "svc_ada", claims.Domain, target)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fs[0].svc.Verify(ctx, "req", "obj_a", c.ID); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	// A period that began after the verifications.
	time.Sleep(time.Until(time.Now().Truncate(period).Add(period)) + 10*time.Millisecond)
	before := fs[0].proofs.looks.Load()
	var wg sync.WaitGroup
	for _, f := range fs {
		wg.Go(func() {
			if err := f.svc.RecheckDue(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := fs[0].proofs.looks.Load() - before; n != int64(len(ids)) {
		t.Errorf("%d looks by three replicas in one period, want %d", n, len(ids))
	}
	n, err := fs[0].st.RecentChecks(ctx, ids[0], time.Time{}, 100)
	if err != nil || len(n) != 2 || !n[0].Scheduled {
		t.Errorf("checks of a claim = %+v, %v; want the verification and one scheduled check", n, err)
	}
}

// TestRecheckScansCostNothingOnceThePeriodIsDone: once a replica has taken or seen taken every
// re-check of a period, its later scans in that period send no store command; the next period's
// scan checks every verified claim again.
func TestRecheckScansCostNothingOnceThePeriodIsDone(t *testing.T) {
	fs := newFixture(t, 1)
	ctx := context.Background()
	var commands atomic.Int64
	mon := &event.CommandMonitor{Started: func(context.Context, *event.CommandStartedEvent) { commands.Add(1) }}
	client, db, err := mongox.Connect(ctx, testkit.Backends(t).MongoURI, fs[0].db.Name(), mon)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(ctx) })
	f := fs[0]
	const period = 3 * time.Second
	f.svc.RecheckInterval = period
	svc := &claims.Service{Store: store.New(db), Identity: f.svc.Identity, Outbox: f.outbox, Checker: f.proofs,
		ChallengeTTL: time.Hour, Log: testkit.Logger(t), Limiter: f.svc.Limiter, RecheckInterval: period}
	for _, target := range []string{"a.example.com", "b.example.com"} {
		c, err := f.svc.Create(ctx, "obj_a", "svc_ada", claims.Domain, target)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Verify(ctx, "req", "obj_a", c.ID); err != nil {
			t.Fatal(err)
		}
	}
	waitNextPeriod := func() { time.Sleep(time.Until(time.Now().Truncate(period).Add(period)) + 10*time.Millisecond) }
	waitNextPeriod()
	before := f.proofs.looks.Load()
	if err := svc.RecheckDue(ctx); err != nil {
		t.Fatal(err)
	}
	if n := f.proofs.looks.Load() - before; n != 2 {
		t.Fatalf("%d looks in the first scan of a period, want 2", n)
	}
	commands.Store(0)
	for range 3 {
		if err := svc.RecheckDue(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := commands.Load(); n != 0 {
		t.Errorf("later scans of the same period sent %d store commands, want none", n)
	}
	waitNextPeriod()
	before = f.proofs.looks.Load()
	if err := svc.RecheckDue(ctx); err != nil {
		t.Fatal(err)
	}
	if n := f.proofs.looks.Load() - before; n != 2 {
		t.Errorf("%d looks in the next period's scan, want 2", n)
	}
}

// TestCreateNamesAnUnknownOrMalformedHash: a claim on a hash no object has is 404, on a string
// that is no hash 400, never a 503 that invites a retry.
func TestCreateNamesAnUnknownOrMalformedHash(t *testing.T) {
	f := newFixture(t, 1)[0]
	ctx := context.Background()
	for hash, status := range map[string]int{"svc_nobody": 404, "not a hash": 400, "": 400} {
		_, err := f.svc.Create(ctx, "obj_a", hash, claims.Domain, "example.com")
		var he *apierr.Error
		if !errors.As(err, &he) || he.Status != status {
			t.Errorf("claim on %q: %v, want %d", hash, err, status)
		}
	}
}

// TestClaimsQuotaAndPages fires 32 creates at once at a quota of 10: exactly 10 get in, the
// others are 409 QUOTA_EXCEEDED; the list pages through the 10, each once, in pages of 4, and
// claims created one after another are listed in that order.
func TestClaimsQuotaAndPages(t *testing.T) {
	f := newFixture(t, 1)[0]
	f.svc.MaxClaims = 10
	f.svc.Identity = objects{"svc_ada": {ObjectID: "obj_a", Hash: "svc_ada", Visibility: "public"},
		"svc_bob": {ObjectID: "obj_b", Hash: "svc_bob", Visibility: "public"}}
	ctx := context.Background()
	var made, refused atomic.Int64
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			_, err := f.svc.Create(ctx, "obj_a", "svc_ada", claims.Domain, fmt.Sprintf("d%d.example.com", i))
			var he *apierr.Error
			switch {
			case err == nil:
				made.Add(1)
			case errors.As(err, &he) && he.Status == 409 && he.Code == apierr.CodeQuotaExceeded:
				refused.Add(1)
			default:
				t.Errorf("create %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if made.Load() != 10 || refused.Load() != 22 {
		t.Fatalf("%d created and %d refused of 32 at once; want 10 and 22", made.Load(), refused.Load())
	}
	seen := map[string]bool{}
	pages := 0
	for after := ""; ; pages++ {
		page, next, err := f.svc.List(ctx, "obj_a", after, 4)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 4 {
			t.Fatalf("a page of limit 4 held %d", len(page))
		}
		for _, v := range page {
			if seen[v.ID] {
				t.Fatalf("claim %s listed twice", v.ID)
			}
			seen[v.ID] = true
		}
		if next == "" {
			break
		}
		after = next
	}
	if len(seen) != 10 {
		t.Fatalf("the pages listed %d claims, want 10", len(seen))
	}

	var order []string
	for _, target := range []string{"one.example.com", "two.example.com", "three.example.com"} {
		c, err := f.svc.Create(ctx, "obj_b", "svc_bob", claims.Domain, target)
		if err != nil {
			t.Fatal(err)
		}
		order = append(order, c.ID)
	}
	if _, err := f.svc.Verify(ctx, "req", "obj_b", order[1]); err != nil {
		t.Fatal(err)
	}
	page, next, err := f.svc.List(ctx, "obj_b", "", 50)
	if err != nil || next != "" || len(page) != 3 {
		t.Fatalf("bob's claims = %d, next %q, %v; want 3 and no next", len(page), next, err)
	}
	for i, v := range page {
		if v.ID != order[i] {
			t.Fatalf("claim %d listed is %s, want %s (oldest first)", i, v.ID, order[i])
		}
	}
	if page[1].Status != claims.Verified || page[1].LastCheck == nil || page[0].Status != claims.Pending || page[0].LastCheck != nil {
		t.Fatalf("views = %+v; want the second verified with its check, the first pending without", page)
	}
}
