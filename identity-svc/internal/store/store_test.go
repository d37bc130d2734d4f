package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// newStore returns a store over a database of the test's own and an outbox (never run) to stage in.
func newStore(t *testing.T) (*Store, *events.Outbox) {
	t.Helper()
	env := testkit.Backends(t)
	db := testkit.Database(t, env, "store")
	if err := mongox.EnsureIndexes(context.Background(), db, append(Indexes, events.OutboxIndexes...)); err != nil {
		t.Fatal(err)
	}
	return New(db), events.NewOutbox(db, nil, testkit.Logger(t), events.OutboxOptions{})
}

func event(t *testing.T, eventType string) events.Pending {
	t.Helper()
	ev, err := events.New(events.TopicIdentity, eventType, "obj_x", "", "req_test", map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestObjectIsFoldedFromItsFacts(t *testing.T) {
	t.Parallel()
	s, outbox := newStore(t)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	o := &Object{ID: "obj_fold", Hash: "svc_first", Hashes: []string{"svc_first"}, Visibility: "public",
		MailboxStatus: StatusUnclaimed, Version: 1, Title: "First", CreatedAt: t0, UpdatedAt: t0}
	if err := s.InsertObject(ctx, o); err != nil {
		t.Fatal(err)
	}
	read, err := s.Object(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.ChangeHash(ctx, read, "svc_second", "second", t0.Add(time.Minute), outbox, event(t, events.ObjectHashChanged)); err != nil {
		t.Fatal(err)
	}
	// A change from the stale read loses: the object moved on meanwhile.
	err = s.ChangeHash(ctx, read, "svc_third", "third", t0.Add(time.Minute), outbox, event(t, events.ObjectHashChanged))
	if !errors.Is(err, ErrTaken) {
		t.Fatalf("a change from a stale read: %v, want ErrTaken", err)
	}
	for _, v := range []int{5, 3, 5} {
		if err := s.UpdateProfile(ctx, o.ID, v, "v", t0.Add(time.Duration(v)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if err := s.RecordClaim(ctx, o.ID, SocialHandle{Network: "github", Handle: "ada", ClaimID: "clm_1"}, t0); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Object(ctx, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Hash != "svc_second" || got.Username != "second" || len(got.Hashes) != 2 || got.HashSeq != 1 ||
		got.Version != 5 || got.MailboxStatus != StatusClaimed || len(got.SocialHandles) != 1 ||
		!got.UpdatedAt.Equal(t0.Add(5*time.Minute)) {
		t.Fatalf("folded object %+v", got)
	}
	if _, err := s.Object(ctx, "obj_missing"); !errors.Is(err, mongox.ErrNotFound) {
		t.Fatalf("a missing object: %v", err)
	}
}

func TestMailboxIsUnclaimedOnceEveryClaimLapsed(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	o := &Object{ID: "obj_lapse", Hash: "svc_lapse", Hashes: []string{"svc_lapse"}, Visibility: "public",
		MailboxStatus: StatusUnclaimed, CreatedAt: t0, UpdatedAt: t0}
	if err := s.InsertObject(ctx, o); err != nil {
		t.Fatal(err)
	}
	status := func(want string, handles int) {
		t.Helper()
		got, err := s.Object(ctx, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.MailboxStatus != want || len(got.SocialHandles) != handles {
			t.Fatalf("mailbox %q with %d handles, want %q with %d", got.MailboxStatus, len(got.SocialHandles), want, handles)
		}
	}
	for _, id := range []string{"clm_a", "clm_b"} {
		if err := s.RecordClaim(ctx, o.ID, SocialHandle{Network: "github", Handle: "ada", ClaimID: id}, t0); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 { // a redelivered lapse is a no-op
		if err := s.RecordLapse(ctx, o.ID, "clm_a", t0.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	status(StatusClaimed, 1)
	if err := s.RecordLapse(ctx, o.ID, "clm_b", t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	status(StatusUnclaimed, 0)
	if err := s.RecordClaim(ctx, o.ID, SocialHandle{Network: "dns", ClaimID: "clm_c"}, t0.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	status(StatusClaimed, 0)
	// A lapsed claim verified again counts again.
	if err := s.RecordClaim(ctx, o.ID, SocialHandle{Network: "github", Handle: "ada", ClaimID: "clm_b"}, t0.Add(4*time.Hour)); err != nil {
		t.Fatal(err)
	}
	status(StatusClaimed, 1)
	if err := s.RecordLapse(ctx, o.ID, "clm_c", t0.Add(5*time.Hour)); err != nil {
		t.Fatal(err)
	}
	status(StatusClaimed, 1)
	if err := s.RecordLapse(ctx, o.ID, "clm_b", t0.Add(6*time.Hour)); err != nil {
		t.Fatal(err)
	}
	status(StatusUnclaimed, 0)
}

func TestRotatedOwnerKeyIsLiveOnlyOnceNamedBySuccession(t *testing.T) {
	t.Parallel()
	s, outbox := newStore(t)
	ctx := context.Background()
	now := time.Now()
	ownerKey := func() *Key {
		_, digest := apikey.Generate(apikey.OwnerPrefix)
		return &Key{Digest: digest, KeyID: apikey.NewID("key"), ObjectID: "obj_rot", Owner: true, CreatedAt: now}
	}
	first := ownerKey()
	if err := s.InsertKey(ctx, first); err != nil {
		t.Fatal(err)
	}
	winner, loser := ownerKey(), ownerKey()
	if _, err := s.Rotate(ctx, "obj_rot", first.KeyID, winner, now, outbox, event(t, events.KeyRotated)); err != nil {
		t.Fatal(err)
	}
	// A rotation that read the first key before the winner revoked it.
	loser.Replaces = first.Digest
	if err := s.InsertKey(ctx, loser); err != nil {
		t.Fatal(err)
	}
	for digest, live := range map[string]bool{first.Digest: false, winner.Digest: true, loser.Digest: false} {
		_, err := s.KeyByDigest(ctx, digest)
		if (err == nil) != live {
			t.Errorf("key %s: verify error %v, want live %v", digest[:8], err, live)
		}
	}
	if _, err := s.Rotate(ctx, "obj_rot", first.KeyID, ownerKey(), now, outbox, event(t, events.KeyRotated)); !errors.Is(err, ErrTaken) {
		t.Fatalf("rotating a rotated-away key: %v, want ErrTaken", err)
	}
}

func TestAssociationDeletionKeepsTheDocument(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	a := &Association{ID: "asc_1", ObjectID: "obj_a", PeerHash: "svc_peer", CreatedAt: time.Now(), Events: []string{"evt_1"}}
	if err := s.InsertAssociation(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteAssociation(ctx, "obj_other", a.ID, time.Now()); !errors.Is(err, mongox.ErrNotFound) {
		t.Fatalf("another object's delete: %v", err)
	}
	if err := s.DeleteAssociation(ctx, "obj_a", a.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteAssociation(ctx, "obj_a", a.ID, time.Now()); !errors.Is(err, mongox.ErrNotFound) {
		t.Fatalf("a second delete: %v", err)
	}
	if list, _, err := s.Associations(ctx, "obj_a", Page{Limit: 10}); err != nil || len(list) != 0 {
		t.Fatalf("associations after delete: %+v, %v", list, err)
	}
	var doc Association
	if err := s.one(ctx, Associations, mongox.ByID(a.ID), &doc); err != nil || len(doc.Events) != 1 {
		t.Fatalf("the deleted association's document: %+v, %v", doc, err)
	}
}

// TestProfileVersionsOfTheEarlierLayoutStillRead: an object whose versions were reported before
// they became a range (facts and a head hint only) reads its latest version from them, and a
// version reported since is read from the range, above them.
func TestProfileVersionsOfTheEarlierLayoutStillRead(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	o := publicObject("obj_earlierprofile", "v1", t0)
	if err := s.InsertObject(ctx, o); err != nil {
		t.Fatal(err)
	}
	for v := 2; v <= 4; v++ { // as the earlier release wrote them
		if err := s.insert(ctx, Facts, fact{ID: factID(o.ID, factProfile, v), ObjectID: o.ID, Kind: factProfile, Seq: v,
			Title: fmt.Sprintf("v%d", v), At: t0}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.raiseProfileHead(ctx, o.ID, 3); err != nil { // a head hint behind the newest fact
		t.Fatal(err)
	}
	got, err := s.Object(ctx, o.ID)
	if err != nil || got.Version != 4 || got.Title != "v4" {
		t.Fatalf("the earlier layout reads version %d %q (%v), want 4", got.Version, got.Title, err)
	}
	if err := s.UpdateProfile(ctx, o.ID, 5, "v5", t0); err != nil {
		t.Fatal(err)
	}
	if got, err = s.Object(ctx, o.ID); err != nil || got.Version != 5 || got.Title != "v5" {
		t.Fatalf("after a new report: version %d %q (%v), want 5", got.Version, got.Title, err)
	}
}
