package object

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/identity-svc/internal/payment"
	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/testkit"
)

// parallel runs f(0..n-1) at once and waits for all.
func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			f(i)
		})
	}
	close(start)
	wg.Wait()
}

// A rotation whose tombstone cannot be written has already revoked the old key in the store, so
// it must hand back the new key rather than fail and leave the owner with no working key.
func TestRotateWithoutRedisHandsBackTheNewKey(t *testing.T) {
	t.Parallel()
	s, _ := newService(t)
	ctx := context.Background()
	c, caller := create(t, s, NewObject{})
	s.Redis = redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	t.Cleanup(func() { _ = s.Redis.Close() })
	r, err := s.Rotate(ctx, "req_test", caller)
	oldWorks := false
	if _, verr := s.VerifyKey(ctx, apikey.Digest(c.APIKey)); verr == nil {
		oldWorks = true
	}
	if err != nil {
		if !oldWorks {
			t.Fatalf("the rotation failed (%v) and the old key no longer verifies: the owner is locked out", err)
		}
		return
	}
	if _, err := s.VerifyKey(ctx, apikey.Digest(r.APIKey)); err != nil {
		t.Fatalf("the handed-back key does not verify: %v", err)
	}
	if oldWorks {
		t.Fatal("the rotation succeeded but the old key still verifies")
	}
}

// Of concurrent rotations of one owner key exactly one wins, and the object is left with exactly
// one live owner key: the one handed back.
func TestConcurrentRotationsLeaveOneLiveOwnerKey(t *testing.T) {
	t.Parallel()
	s, _ := newService(t)
	ctx := context.Background()
	_, caller := create(t, s, NewObject{})
	const n = 8
	keys := make([]string, n)
	parallel(n, func(i int) {
		if r, err := s.Rotate(ctx, "req_test", caller); err == nil {
			keys[i] = r.APIKey
		} else if !isStatus(err, http.StatusConflict) && !isStatus(err, http.StatusNotFound) {
			t.Errorf("a losing rotation answered %v, want 409", err)
		}
	})
	handed := slices.DeleteFunc(keys, func(k string) bool { return k == "" })
	if len(handed) != 1 {
		t.Fatalf("%d rotations succeeded, want 1", len(handed))
	}
	live := liveOwnerKeys(t, s, caller.ObjectID)
	if !slices.Equal(live, []string{apikey.Digest(handed[0])}) {
		t.Fatalf("live owner keys %v, want only the handed-back one %s", live, apikey.Digest(handed[0]))
	}
}

func isStatus(err error, status int) bool {
	var he *httpx.Error
	return errors.As(err, &he) && he.Status == status
}

// liveOwnerKeys returns the digests of the object's owner keys that verify.
func liveOwnerKeys(t *testing.T, s *Service, objectID string) []string {
	t.Helper()
	ctx := context.Background()
	cur, err := s.Store.(*store.Store).DB().Collection(store.Keys).Find(ctx, bson.D{{Key: "object_id", Value: objectID}, {Key: "owner", Value: true}})
	if err != nil {
		t.Fatal(err)
	}
	var all []store.Key
	if err := cur.All(ctx, &all); err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, k := range all {
		if _, err := s.VerifyKey(ctx, k.Digest); err == nil {
			live = append(live, k.Digest)
		}
	}
	return live
}

// Of concurrent custom-hash claims by one object exactly one wins and pays; the losers' vouchers
// and names are free again and only the winner's hash change is published.
func TestConcurrentCustomHashClaimsOneWinsOnePays(t *testing.T) {
	t.Parallel()
	s, relay := newService(t)
	ctx := context.Background()
	_, caller := create(t, s, NewObject{})
	vouchers := payment.NewVouchers(voucherSecret)
	const n = 6
	refs := make([]string, n)
	for i := range refs {
		refs[i] = vouchers.Issue()
	}
	won := make([]bool, n)
	parallel(n, func(i int) {
		_, err := s.ClaimCustomHash(ctx, "req_test", caller.ObjectID, HashClaim{Username: fmt.Sprintf("name_%d", i), PaymentReference: refs[i]})
		won[i] = err == nil
		if err != nil && !isStatus(err, http.StatusConflict) {
			t.Errorf("a losing claim answered %v, want 409", err)
		}
	})
	winners := 0
	for i, w := range won {
		if w {
			winners++
			continue
		}
		// The loser's voucher and name are free: another object can use both.
		_, other := create(t, s, NewObject{})
		if _, err := s.ClaimCustomHash(ctx, "req_test", other.ObjectID, HashClaim{Username: fmt.Sprintf("name_%d", i), PaymentReference: refs[i]}); err != nil {
			t.Errorf("the losing claim %d kept its voucher or name: %v", i, err)
		}
	}
	if winners != 1 {
		t.Fatalf("%d concurrent claims succeeded, want 1", winners)
	}
	changes := 0
	for _, ty := range relay.types() {
		if ty == events.ObjectHashChanged {
			changes++
		}
	}
	if want := 1 + (n - 1); changes != want {
		t.Fatalf("%d hash-change events, want %d (one winner, then one per re-claim)", changes, want)
	}
}

// Concurrent reports, claims, hash changes and rotations of one object lose none of them, and the
// profile version a reader sees never goes backwards.
func TestConcurrentObjectFactsAreNotLost(t *testing.T) {
	t.Parallel()
	s, _ := newService(t)
	ctx := context.Background()
	const rounds = 10
	parallel(rounds, func(round int) {
		_, caller := create(t, s, NewObject{})
		const versions = 8
		var seen []int
		var mu sync.Mutex
		parallel(versions+3, func(i int) {
			var err error
			switch {
			case i < versions:
				err = s.ReportProfile(ctx, caller.ObjectID, contract.ProfileUpdate{Version: i + 2, Title: fmt.Sprintf("v%d", i+2)})
			case i == versions:
				_, err = s.ClaimCustomHash(ctx, "req_test", caller.ObjectID, HashClaim{Username: fmt.Sprintf("round_%d", round),
					PaymentReference: payment.NewVouchers(voucherSecret).Issue()})
			case i == versions+1:
				err = s.RecordClaim(ctx, caller.ObjectID, VerifiedClaim{ClaimID: "clm", Network: "github", Handle: "octo"})
			default:
				for range 4 {
					if o, rerr := s.ByID(ctx, caller.ObjectID); rerr == nil {
						mu.Lock()
						seen = append(seen, o.Version)
						mu.Unlock()
					}
				}
			}
			if err != nil {
				t.Errorf("round %d step %d: %v", round, i, err)
			}
		})
		o, err := s.ByID(ctx, caller.ObjectID)
		if err != nil {
			t.Error(err)
			return
		}
		if o.Hash != fmt.Sprintf("svc_round_%d", round) || o.Version != versions+1 || o.Title != fmt.Sprintf("v%d", versions+1) ||
			o.MailboxStatus != StatusClaimed || len(o.SocialHandles) != 1 {
			t.Errorf("round %d lost a fact: hash %s version %d title %q status %s handles %v",
				round, o.Hash, o.Version, o.Title, o.MailboxStatus, o.SocialHandles)
		}
		if !slices.IsSorted(seen) {
			t.Errorf("round %d: a reader saw the version go backwards: %v", round, seen)
		}
	})
}

// Deleting an association before the relay published its creation keeps the creation event.
func TestDeletedAssociationKeepsItsUnsentEvent(t *testing.T) {
	t.Parallel()
	s, _ := newService(t)
	ctx := context.Background()
	_, caller := create(t, s, NewObject{})
	peer, _ := create(t, s, NewObject{})
	// The writer stages its event and dies before publishing it: its outbox never runs.
	s.Outbox = events.NewOutbox(s.Store.(*store.Store).DB(), &published{}, testkit.Logger(t), events.OutboxOptions{})
	a, err := s.Associate(ctx, "req_test", caller, NewAssociation{PeerHash: peer.Object.Hash})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Dissociate(ctx, caller, a.ID); err != nil {
		t.Fatal(err)
	}
	// Another replica's sweep finds the event its writer staged but never published.
	pub := &published{}
	relay := events.NewOutbox(s.Store.(*store.Store).DB(), pub, testkit.Logger(t),
		events.OutboxOptions{SweepInterval: 100 * time.Millisecond, RecoverAfter: time.Millisecond})
	rctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	go func() { _ = relay.Run(rctx) }()
	for rctx.Err() == nil {
		if slices.Contains(pub.types(), events.AssociationCreated) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the relay published %v, never the deleted association's association.created", pub.types())
}

// published records what a relay publishes.
type published struct{ sent }

func (p *published) Publish(_ context.Context, evs ...events.Pending) error {
	p.Confirm(evs...)
	return nil
}
