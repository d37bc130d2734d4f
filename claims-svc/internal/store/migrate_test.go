package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/svcdev/svc/claims-svc/internal/store"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// TestBackfillListsOnce: claims, states and checks stored by a release without the lists are
// listed oldest first after the backfill, a state's head is found, a verified claim is due in
// the given period, a claim's last check and recent checks come from its list; a second run
// does nothing.
func TestBackfillListsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testkit.Database(t, testkit.Backends(t), "claims")
	if err := mongox.EnsureIndexes(ctx, db, store.Indexes); err != nil {
		t.Fatal(err)
	}
	st := store.New(db)
	base := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	var ids []string
	for i := range 3 {
		c := &store.Claim{ID: fmt.Sprintf("clm_0%d", i), ObjectID: "obj_a", ObjectHash: "svc_a", ProofType: "domain",
			ClaimedTarget: "example.com", Subject: "example.com", Token: "t", CreatedAt: base, ExpiresAt: base.Add(time.Hour)}
		if err := st.InsertClaim(ctx, c); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	// The older release: two states of clm_00 (verified, lapsed, verified again) and checks in
	// their own collection, without lists or hints.
	for gen, status := range []string{"verified", "lapsed", "verified"} {
		if _, err := db.Collection(store.States).InsertOne(ctx, store.State{ID: store.StateID("clm_00", gen+1), ClaimID: "clm_00",
			ObjectID: "obj_a", Gen: gen + 1, Status: status, At: base.Add(time.Duration(gen) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 9 {
		outcome := store.Mismatch
		if i == 8 {
			outcome = store.Match
		}
		if _, err := db.Collection(store.Checks).InsertOne(ctx, store.Check{ID: fmt.Sprintf("chk_%02d", i), ClaimID: "clm_00",
			At: base.Add(time.Duration(i) * time.Second), Outcome: outcome}); err != nil {
			t.Fatal(err)
		}
	}
	period := time.Now().Truncate(time.Hour)

	n, err := st.BackfillLists(ctx, period, 6)
	if err != nil || n != 3 {
		t.Fatalf("BackfillLists = %d, %v; want 3 claims listed", n, err)
	}
	page, next, err := st.ClaimsPage(ctx, "obj_a", 0, 2)
	if err != nil || len(page) != 2 || page[0].ID != ids[0] || page[1].ID != ids[1] || next == 0 {
		t.Fatalf("first page = %v, next %d, %v; want clm_00, clm_01 and a next place", page, next, err)
	}
	if rest, next, err := st.ClaimsPage(ctx, "obj_a", next, 2); err != nil || len(rest) != 1 || rest[0].ID != ids[2] || next != 0 {
		t.Fatalf("second page = %v, next %d, %v; want clm_02 and no next", rest, next, err)
	}
	cur, ok, err := st.CurrentState(ctx, "clm_00")
	if err != nil || !ok || cur.Gen != 3 || cur.Status != "verified" {
		t.Fatalf("current state = %+v, %v, %v; want gen 3 verified", cur, ok, err)
	}
	due, _, err := st.DueRechecks(ctx, period, 0, 10)
	if err != nil || len(due) != 1 || due[0] != "clm_00" {
		t.Fatalf("due in the period: %v, %v; want clm_00", due, err)
	}
	for _, id := range ids {
		last, ok, err := st.LastCheck(ctx, id)
		if want := id == "clm_00"; err != nil || ok != want || want && last.ID != "chk_08" {
			t.Fatalf("last check of %s = %+v, %v, %v; want chk_08 for clm_00 only", id, last, ok, err)
		}
	}
	recent, err := st.RecentChecks(ctx, "clm_00", time.Time{}, 10)
	if err != nil || len(recent) != 6 || recent[0].ID != "chk_08" || recent[5].ID != "chk_03" {
		t.Fatalf("recent checks = %+v, %v; want the newest 6, newest first", recent, err)
	}
	if n, err := st.BackfillLists(ctx, period, 6); err != nil || n != 0 {
		t.Fatalf("second BackfillLists = %d, %v; want nothing", n, err)
	}
	if again, _, _ := st.ClaimsPage(ctx, "obj_a", 0, 10); len(again) != 3 {
		t.Fatalf("after a second run the object lists %d claims, want 3", len(again))
	}
}
