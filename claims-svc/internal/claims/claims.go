// Package claims holds claims-svc's use cases: creating a claim and its challenge, verifying it,
// re-checking verified claims.
package claims

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/svcdev/svc/claims-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/outbound"
)

// Claim statuses.
const (
	Pending  = "pending"
	Verified = "verified"
	Lapsed   = "lapsed"
	Expired  = "expired"
)

// LapseAfter is the number of mismatches in a row that lapse a verified claim.
const LapseAfter = 3

// RecentChecksRead is how many of a claim's newest checks the lapse rule reads.
const RecentChecksRead = 2 * LapseAfter

// Resolver finds the object a hash names (identity-svc).
type Resolver interface {
	Resolve(ctx context.Context, hash string) (*identity.Object, error)
}

// Outbox stages events before the insert that records them and confirms them after it.
type Outbox interface {
	Stage(ctx context.Context, collection string, id any, evs ...events.Pending) error
	Confirm(evs ...events.Pending)
}

// Checker looks at a claim's proof once.
type Checker interface {
	Check(ctx context.Context, c *store.Claim) Result
}

// ClaimStore is what the claim use cases read and write: claims, their checks and states, and the
// leases of the re-check.
type ClaimStore interface {
	Claim(ctx context.Context, id string) (*store.Claim, error)
	ClaimsPage(ctx context.Context, objectID, after string, limit int) ([]store.Claim, string, error)
	CurrentState(ctx context.Context, claimID string) (store.State, bool, error)
	CurrentStates(ctx context.Context, claimIDs []string) (map[string]store.State, error)
	DueRechecks(ctx context.Context, period time.Time, after string, limit int) ([]string, string, error)
	InsertCheck(ctx context.Context, c *store.Check) error
	InsertClaim(ctx context.Context, c *store.Claim) error
	InsertState(ctx context.Context, st *store.State) error
	LastCheck(ctx context.Context, claimID string) (store.Check, bool, error)
	Leases() mongox.Leases
	MarkRechecked(ctx context.Context, period time.Time) error
	RecentChecks(ctx context.Context, claimID string, since time.Time, limit int64) ([]store.Check, error)
	RecheckedThrough(ctx context.Context) (time.Time, error)
	ScheduleRecheck(ctx context.Context, period time.Time, claimID string) error
	TakePlace(ctx context.Context, objectID, claimID string, max int) (bool, error)
}

// Service holds the use cases.
type Service struct {
	Store    ClaimStore
	Identity Resolver
	Outbox   Outbox
	Checker  Checker
	// Limiter bounds the proof fetches the process runs at once (with the other outbound work
	// of the process): a verification past its queue is a 503 with Retry-After.
	Limiter *outbound.Limiter
	// ChallengeTTL is how long a pending claim may be verified (7 days).
	ChallengeTTL time.Duration
	// MaxClaims bounds the claims one object ever creates (DefaultMaxClaims when 0).
	MaxClaims int
	// RecheckInterval is how often each verified claim is looked at again (24 hours when 0).
	RecheckInterval time.Duration
	Log             *slog.Logger

	// rechecked is the last period (its UnixNano) this replica saw every due re-check taken (see
	// RecheckDue).
	rechecked atomic.Int64
}

// View is a claim as its owner reads it.
type View struct {
	ID            string     `json:"id"`
	ObjectHash    string     `json:"object_hash"`
	ProofType     string     `json:"proof_type"`
	ClaimedTarget string     `json:"claimed_target"`
	Status        string     `json:"status"`
	Challenge     Challenge  `json:"challenge"`
	CreatedAt     string     `json:"created_at"`
	VerifiedAt    *string    `json:"verified_at"`
	LastCheckedAt *string    `json:"last_checked_at"`
	LastCheck     *CheckView `json:"last_check"`
}

// Challenge is where to place the token.
type Challenge struct {
	Token        string `json:"token"`
	Instructions string `json:"instructions"`
	ExpiresAt    string `json:"expires_at"`
}

// CheckView is one look at the proof: its outcome, why it failed, and what it saw.
type CheckView struct {
	Outcome   string  `json:"outcome"`
	Reason    *string `json:"reason"`
	Evidence  *string `json:"evidence"`
	CheckedAt string  `json:"checked_at"`
}

// Verification is the answer of a verify: Status is this check's result (verified or failed,
// with a reason), ClaimStatus the claim's status after it.
type Verification struct {
	ID          string  `json:"id"`
	Status      string  `json:"status"`
	VerifiedAt  *string `json:"verified_at"`
	Reason      *string `json:"reason"`
	ClaimStatus string  `json:"claim_status"`
	CheckedAt   *string `json:"checked_at"`
	Evidence    *string `json:"evidence"`
}

// Create records a claim of the caller's object (objectID) over the object named by hash.
func (s *Service) Create(ctx context.Context, objectID, hash, proofType, claimedTarget string) (*View, error) {
	if !slices.Contains(ProofTypes, proofType) {
		return nil, apierr.BadRequest(apierr.CodeInvalidKind, "proof_type must be one of %s", strings.Join(ProofTypes, ", "))
	}
	t, err := parseTarget(proofType, claimedTarget)
	if err != nil {
		return nil, err
	}
	if !apikey.ValidHash(hash) {
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "object_hash must be an object hash such as svc_abc123")
	}
	obj, err := s.Identity.Resolve(ctx, hash)
	if errors.Is(err, identity.ErrNotFound) || err == nil && !contract.Visible(obj.Visibility, obj.ObjectID, objectID) {
		return nil, apierr.NotFound("object")
	}
	if err != nil {
		return nil, apierr.Unavailable(fmt.Errorf("resolve the object: %w", err))
	}
	if obj.ObjectID != objectID {
		return nil, apierr.Forbidden(apierr.CodeForbidden, "this key does not own the object")
	}
	c0 := apikey.NewID("clm")
	if err := s.takePlace(ctx, obj.ObjectID, c0); err != nil {
		return nil, err
	}
	c := s.newClaim(c0, obj.ObjectID, obj.Hash, proofType, claimedTarget, t)
	if err := s.Store.InsertClaim(ctx, c); err != nil {
		return nil, err
	}
	return view(c, nil, nil, c.CreatedAt), nil
}

// newClaim is a new claim as a create stores it.
func (s *Service) newClaim(id, objectID, hash, proofType, claimedTarget string, t target) *store.Claim {
	now := clock.Now()
	return &store.Claim{
		ID: id, ObjectID: objectID, ObjectHash: hash, ProofType: proofType,
		ClaimedTarget: strings.TrimSpace(claimedTarget), Subject: t.Subject, Host: t.Host,
		Token: newToken(), CreatedAt: now, ExpiresAt: now.Add(s.ChallengeTTL),
	}
}

// Get reads a claim of the caller's object; another object's claim is not found.
func (s *Service) Get(ctx context.Context, objectID, claimID string) (*View, error) {
	c, err := s.owned(ctx, objectID, claimID)
	if err != nil {
		return nil, err
	}
	views, err := s.views(ctx, []store.Claim{*c})
	if err != nil {
		return nil, err
	}
	return &views[0], nil
}

// DefaultMaxClaims is the claims quota of an object when none is configured.
const DefaultMaxClaims = 100

// takePlace takes a place of the object's claims quota for a new claim: the places are
// inserts, so concurrent creates never pass it.
func (s *Service) takePlace(ctx context.Context, objectID, claimID string) error {
	max := int64(s.MaxClaims)
	if max <= 0 {
		max = DefaultMaxClaims
	}
	ok, err := s.Store.TakePlace(ctx, objectID, claimID, int(max))
	if err != nil {
		return err
	}
	if !ok {
		return apierr.QuotaExceeded("claims per object (CLAIMS_MAX_PER_OBJECT)", max)
	}
	return nil
}

// List lists up to limit of an object's claims, oldest first, after the claim after, and the
// claim to continue after ("" when none is left).
func (s *Service) List(ctx context.Context, objectID, after string, limit int) ([]View, string, error) {
	if after != "" && !mongox.KeyPart(after) {
		return nil, "", apierr.BadRequest(apierr.CodeInvalidRequest, "cursor is not valid")
	}
	cs, next, err := s.Store.ClaimsPage(ctx, objectID, after, limit)
	if err != nil {
		return nil, "", err
	}
	vs, err := s.views(ctx, cs)
	return vs, next, err
}

// Verify checks a claim's proof now, on the owner's demand: a pending claim becomes verified, a
// verified one is re-checked.
func (s *Service) Verify(ctx context.Context, requestID, objectID, claimID string) (*Verification, error) {
	c, err := s.owned(ctx, objectID, claimID)
	if err != nil {
		return nil, err
	}
	cur, has, err := s.Store.CurrentState(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	now := clock.Now()
	if !has && !now.Before(c.ExpiresAt) {
		reason := fmt.Sprintf("the challenge expired at %s: create a new claim", clock.Format(c.ExpiresAt))
		return &Verification{ID: c.ID, Status: "failed", Reason: &reason, ClaimStatus: Expired}, nil
	}
	check, st, err := s.check(ctx, requestID, c, orNil(cur, has), false)
	if err != nil {
		return nil, err
	}
	out := &Verification{ID: c.ID, Status: "failed", ClaimStatus: Pending, CheckedAt: clock.FormatPtr(&check.At),
		Reason: contract.Optional(check.Reason), Evidence: contract.Optional(check.Evidence)}
	if check.Outcome == store.Match {
		out.Status = Verified
	}
	if st != nil {
		out.ClaimStatus = st.Status
		if st.Status == Verified {
			out.VerifiedAt = clock.FormatPtr(&st.VerifiedAt)
		}
	}
	return out, nil
}

// check looks at c's proof, records what it saw and applies it to the claim's status (cur: the
// current state, nil while pending). It returns the check and the state after it.
func (s *Service) check(ctx context.Context, requestID string, c *store.Claim, cur *store.State, scheduled bool) (*store.Check, *store.State, error) {
	r, err := s.look(ctx, c, scheduled)
	if err != nil {
		return nil, nil, err
	}
	ch := &store.Check{ID: apikey.NewID("chk"), ClaimID: c.ID, At: clock.Now(), Outcome: r.Outcome, Reason: r.Reason,
		Evidence: r.Evidence, Scheduled: scheduled}
	if err := s.Store.InsertCheck(ctx, ch); err != nil {
		return nil, nil, err
	}
	verified := cur != nil && cur.Status == Verified
	switch {
	case r.Outcome == store.Match && !verified:
		st, err := s.transition(ctx, c, cur, Verified, ch.At, func(st *store.State) (events.Pending, error) {
			return verifiedEvent(requestID, c, ch.At), nil
		})
		return ch, st, err
	case r.Outcome == store.Mismatch && verified:
		recent, err := s.Store.RecentChecks(ctx, c.ID, cur.At, RecentChecksRead)
		if err != nil {
			return nil, nil, err
		}
		if mismatchesInARow(recent) < LapseAfter {
			return ch, cur, nil
		}
		st, err := s.transition(ctx, c, cur, Lapsed, ch.At, func(*store.State) (events.Pending, error) {
			remain, err := s.othersVerified(ctx, c)
			return lapsedEvent(requestID, c, ch.At, remain), err
		})
		return ch, st, err
	}
	return ch, cur, nil
}

// look checks c's proof in a turn of the process's outbound work: an owner's verification is
// refused past the queue, a scheduled re-check (no caller to refuse) waits for its turn.
func (s *Service) look(ctx context.Context, c *store.Claim, scheduled bool) (Result, error) {
	take := func(ctx context.Context) (func(), error) { return s.Limiter.Turn(ctx, "checking proofs") }
	if scheduled {
		take = s.Limiter.Wait
	}
	release, err := take(ctx)
	if err != nil {
		return Result{}, err
	}
	defer release()
	return s.Checker.Check(ctx, c), nil
}

// transition records the claim's next state with its event. When another writer recorded that
// state first, its state is returned and no second event is published.
func (s *Service) transition(ctx context.Context, c *store.Claim, cur *store.State, status string, at time.Time,
	event func(*store.State) (events.Pending, error)) (*store.State, error) {
	gen := 1
	st := &store.State{ClaimID: c.ID, ObjectID: c.ObjectID, Status: status, At: at, VerifiedAt: at}
	if cur != nil {
		gen = cur.Gen + 1
		if status != Verified {
			st.VerifiedAt = cur.VerifiedAt
		}
	}
	st.Gen, st.ID = gen, store.StateID(c.ID, gen)
	ev, err := event(st)
	if err != nil {
		return nil, err
	}
	st.Events = events.IDs(ev)
	if status == Verified {
		// The re-check schedule first: a claim verified without its entry would never be looked
		// at again, while an entry of a claim that did not change is skipped when it comes due.
		if err := s.Store.ScheduleRecheck(ctx, s.nextPeriod(at), c.ID); err != nil {
			return nil, err
		}
	}
	if err := s.Outbox.Stage(ctx, store.States, st.ID, ev); err != nil {
		return nil, err
	}
	err = s.Store.InsertState(ctx, st)
	if errors.Is(err, store.ErrTaken) {
		won, _, err := s.Store.CurrentState(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		return &won, nil
	}
	if err != nil {
		return nil, err
	}
	s.Outbox.Confirm(ev)
	return st, nil
}

// mismatchesInARow counts the mismatches since the last match, newest first; an unreachable
// target neither counts nor breaks the run.
func mismatchesInARow(recent []store.Check) int {
	n := 0
	for _, ch := range recent {
		switch ch.Outcome {
		case store.Match:
			return n
		case store.Mismatch:
			n++
		}
	}
	return n
}

// othersVerified reports whether another claim of c's object is verified. It reads the object's
// claims, which its quota bounds, page by page.
func (s *Service) othersVerified(ctx context.Context, c *store.Claim) (bool, error) {
	for after := ""; ; {
		cs, next, err := s.Store.ClaimsPage(ctx, c.ObjectID, after, 50)
		if err != nil {
			return false, err
		}
		var ids []string
		for _, other := range cs {
			if other.ID != c.ID {
				ids = append(ids, other.ID)
			}
		}
		states, err := s.Store.CurrentStates(ctx, ids)
		if err != nil {
			return false, err
		}
		for _, st := range states {
			if st.Status == Verified {
				return true, nil
			}
		}
		if next == "" {
			return false, nil
		}
		after = next
	}
}

// owned reads a claim of objectID's; another object's claim is not found, as an unknown one.
func (s *Service) owned(ctx context.Context, objectID, claimID string) (*store.Claim, error) {
	c, err := s.Store.Claim(ctx, claimID)
	if errors.Is(err, mongox.ErrNotFound) || err == nil && c.ObjectID != objectID {
		return nil, apierr.NotFound("claim")
	}
	return c, err
}

// viewReaders bounds the claims whose state and last check one request reads at once.
const viewReaders = 16

// views builds the owner's views of claims with their states and last checks: two finds per
// claim (the last of its states, the last of its checks), a few claims at once.
func (s *Service) views(ctx context.Context, cs []store.Claim) ([]View, error) {
	now := clock.Now()
	out := make([]View, len(cs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(viewReaders)
	for i := range cs {
		g.Go(func() error {
			st, has, err := s.Store.CurrentState(gctx, cs[i].ID)
			if err != nil {
				return err
			}
			ch, checked, err := s.Store.LastCheck(gctx, cs[i].ID)
			if err != nil {
				return err
			}
			out[i] = *view(&cs[i], orNil(st, has), orNil(ch, checked), now)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

func view(c *store.Claim, st *store.State, ch *store.Check, now time.Time) *View {
	v := &View{
		ID: c.ID, ObjectHash: c.ObjectHash, ProofType: c.ProofType, ClaimedTarget: c.ClaimedTarget, Status: Pending,
		Challenge: Challenge{Token: c.Token, Instructions: instructions(c.ProofType, target{Subject: c.Subject, Host: c.Host}, c.Token),
			ExpiresAt: clock.Format(c.ExpiresAt)},
		CreatedAt: clock.Format(c.CreatedAt),
	}
	switch {
	case st != nil:
		v.Status = st.Status
		v.VerifiedAt = clock.FormatPtr(&st.VerifiedAt)
	case !now.Before(c.ExpiresAt):
		v.Status = Expired
	}
	if ch != nil {
		v.LastCheckedAt = clock.FormatPtr(&ch.At)
		v.LastCheck = &CheckView{Outcome: ch.Outcome, Reason: contract.Optional(ch.Reason), Evidence: contract.Optional(ch.Evidence), CheckedAt: clock.Format(ch.At)}
	}
	return v
}

// orNil is &v when ok, else nil: a state or a check as the store's reads report it.
func orNil[T any](v T, ok bool) *T {
	if !ok {
		return nil
	}
	return &v
}

// newToken returns 160 random bits in lower-case base32.
func newToken() string {
	b := make([]byte, 20)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b))
}
