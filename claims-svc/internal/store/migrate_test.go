package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/claims-svc/internal/store"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// TestUpgradeCarriesAnEarlierLayoutOverOnce writes a store as the earlier releases left it
// (states numbered "<claim>/<gen>" with a head hint, checks under their ids, checks and a
// re-check schedule in mongox.Log lists) and upgrades it: the object's claims page oldest first
// and hold places of the quota, the current state and the checks come from their ranges, the
// schedule is kept and a verified claim is due in the current period, the old documents are
// gone; a second run does nothing.
func TestUpgradeCarriesAnEarlierLayoutOverOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, st := openStore(t)
	base := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	var ids []string
	for i := range 3 {
		id := fmt.Sprintf("clm_0%d", i)
		c := store.Claim{ID: id, ObjectID: "obj_a", ObjectHash: "svc_a", ProofType: "domain",
			ClaimedTarget: "example.com", Subject: "example.com", Token: "t", CreatedAt: base, ExpiresAt: base.Add(time.Hour)}
		insert(t, db.Collection(store.Claims), c)
		ids = append(ids, id)
	}
	for gen, status := range []string{"verified", "lapsed", "verified"} {
		insert(t, db.Collection(store.States), bson.M{"_id": fmt.Sprintf("clm_00/%06d", gen+1), "claim_id": "clm_00",
			"object_id": "obj_a", "gen": gen + 1, "status": status, "at": base.Add(time.Duration(gen) * time.Minute)})
	}
	insert(t, db.Collection(store.States), bson.M{"_id": "clm_00/head", "gen": 2})
	oldCheck := func(i int) bson.M {
		outcome := store.Mismatch
		if i == 8 {
			outcome = store.Match
		}
		return bson.M{"_id": fmt.Sprintf("chk_%02d", i), "claim_id": "clm_00", "at": base.Add(time.Duration(i) * time.Second), "outcome": outcome}
	}
	// The oldest release kept checks in their collection, the next one in the lists.
	for i := range 5 {
		insert(t, db.Collection(store.Checks), oldCheck(i))
	}
	for i := 3; i < 9; i++ {
		insert(t, db.Collection(store.Logs), bson.M{"_id": fmt.Sprintf("checks:clm_00#%d", i-2), "seq": i - 2, "at": base, "v": oldCheck(i)})
	}
	insert(t, db.Collection(store.Logs), bson.M{"_id": "checks:clm_00#head", "seq": 6})
	earlier := time.Now().Truncate(time.Hour).Add(-time.Hour)
	insert(t, db.Collection(store.Logs), bson.M{"_id": fmt.Sprintf("due:%d#1", earlier.UnixMilli()), "seq": 1, "at": base, "v": "clm_02"})
	insert(t, db.Collection(store.Logs), bson.M{"_id": "claims:obj_a#1", "seq": 1, "at": base, "v": "clm_00"})
	period := time.Now().Truncate(time.Hour)

	n, err := st.Upgrade(ctx, period, 5)
	if err != nil || n != 3 {
		t.Fatalf("Upgrade = %d, %v; want 3 claims listed", n, err)
	}
	page, next, err := st.ClaimsPage(ctx, "obj_a", "", 2)
	if err != nil || len(page) != 2 || page[0].ID != ids[0] || page[1].ID != ids[1] || next != ids[1] {
		t.Fatalf("first page = %v, next %q, %v; want clm_00, clm_01 and to go on after clm_01", page, next, err)
	}
	if rest, next, err := st.ClaimsPage(ctx, "obj_a", next, 2); err != nil || len(rest) != 1 || rest[0].ID != ids[2] || next != "" {
		t.Fatalf("second page = %v, next %q, %v; want clm_02 and no next", rest, next, err)
	}
	// Three places of five are taken: two more claims fit, a third does not.
	for i, want := range []bool{true, true, false} {
		if ok, err := st.TakePlace(ctx, "obj_a", fmt.Sprintf("clm_1%d", i), 5); err != nil || ok != want {
			t.Fatalf("place %d after the upgrade: %v, %v; want %v", 4+i, ok, err, want)
		}
	}
	cur, ok, err := st.CurrentState(ctx, "clm_00")
	if err != nil || !ok || cur.Gen != 3 || cur.Status != "verified" || cur.ID != store.StateID("clm_00", 3) {
		t.Fatalf("current state = %+v, %v, %v; want gen 3 verified", cur, ok, err)
	}
	if due, _, err := st.DueRechecks(ctx, period, "", 10); err != nil || len(due) != 1 || due[0] != "clm_00" {
		t.Fatalf("due in the period: %v, %v; want clm_00", due, err)
	}
	if due, _, err := st.DueRechecks(ctx, earlier, "", 10); err != nil || len(due) != 1 || due[0] != "clm_02" {
		t.Fatalf("due in the earlier period: %v, %v; want clm_02 (carried over)", due, err)
	}
	for _, id := range ids {
		last, ok, err := st.LastCheck(ctx, id)
		if want := id == "clm_00"; err != nil || ok != want || want && last.ID != "chk_08" {
			t.Fatalf("last check of %s = %+v, %v, %v; want chk_08 for clm_00 only", id, last, ok, err)
		}
	}
	recent, err := st.RecentChecks(ctx, "clm_00", time.Time{}, 10)
	if err != nil || len(recent) != 9 || recent[0].ID != "chk_08" || recent[8].ID != "chk_00" {
		t.Fatalf("recent checks = %+v, %v; want all 9 once, newest first", recent, err)
	}
	for _, c := range []string{store.States, store.Checks} {
		if n, err := db.Collection(c).CountDocuments(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: "^(clm|chk)_[0-9]+(/|$)"}}}}); err != nil || n != 0 {
			t.Fatalf("%s keeps %d documents of the old layout (%v)", c, n, err)
		}
	}
	if names, err := db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: store.Logs}}); err != nil || len(names) != 0 {
		t.Fatalf("the old lists are still there: %v, %v", names, err)
	}
	if n, err := st.Upgrade(ctx, period, 5); err != nil || n != 0 {
		t.Fatalf("second Upgrade = %d, %v; want nothing", n, err)
	}
	if again, _, _ := st.ClaimsPage(ctx, "obj_a", "", 10); len(again) != 3 {
		t.Fatalf("after a second run the object lists %d claims, want 3", len(again))
	}
}

// openStore opens a store on a fresh database of the test backends, its collections made.
func openStore(t *testing.T) (*mongo.Database, *store.Store) {
	t.Helper()
	db := testkit.Database(t, testkit.Backends(t), "claims")
	if err := mongox.EnsureIndexes(context.Background(), db, store.Indexes); err != nil {
		t.Fatal(err)
	}
	return db, store.New(db)
}

func insert(t *testing.T, coll *mongo.Collection, doc any) {
	t.Helper()
	if _, err := coll.InsertOne(context.Background(), doc); err != nil {
		t.Fatal(err)
	}
}

// TestUpgradeOfANewStore: a store no earlier release wrote (no old lists to drop) upgrades at
// once and leaves its marker.
func TestUpgradeOfANewStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, st := openStore(t)
	for range 2 {
		if n, err := st.Upgrade(ctx, time.Now().Truncate(time.Hour), 5); err != nil || n != 0 {
			t.Fatalf("Upgrade of a new store = %d, %v; want 0, nil", n, err)
		}
	}
}

// TestUpgradePlacesClaimsInTheirOrderOfCreation: the claims of two objects, stored interleaved,
// take their objects' places in the order they were made, whatever the other object's claims
// between them; a claim that holds a place already (a run cut short) takes no second one, and a
// claim past the quota takes none.
func TestUpgradePlacesClaimsInTheirOrderOfCreation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, st := openStore(t)
	base := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	for i, object := range []string{"obj_a", "obj_b", "obj_a", "obj_b", "obj_a"} {
		insert(t, db.Collection(store.Claims), store.Claim{ID: fmt.Sprintf("clm_0%d", i+1), ObjectID: object, ObjectHash: "svc_x",
			ProofType: "domain", ClaimedTarget: "example.com", Subject: "example.com", Token: "t", CreatedAt: base, ExpiresAt: base.Add(time.Hour)})
	}
	insert(t, db.Collection(store.Places), bson.M{"_id": mongox.Key("obj_a", mongox.Seq(1)), "claim_id": "clm_01"})

	if n, err := st.Upgrade(ctx, time.Now().Truncate(time.Hour), 2); err != nil || n != 5 {
		t.Fatalf("Upgrade = %d, %v; want 5 claims listed", n, err)
	}
	want := map[string]string{
		mongox.Key("obj_a", mongox.Seq(1)): "clm_01", mongox.Key("obj_a", mongox.Seq(2)): "clm_03",
		mongox.Key("obj_b", mongox.Seq(1)): "clm_02", mongox.Key("obj_b", mongox.Seq(2)): "clm_04",
	}
	places, err := mongox.FindAll[bson.M](ctx, db.Collection(store.Places), bson.D{})
	if err != nil || len(places) != len(want) {
		t.Fatalf("places = %v, %v; want %v", places, err, want)
	}
	for _, p := range places {
		if want[p["_id"].(string)] != p["claim_id"] {
			t.Fatalf("places = %v; want %v", places, want)
		}
	}
}
