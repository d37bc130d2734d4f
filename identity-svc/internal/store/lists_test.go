package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/mongox"
)

// publicObject makes a public object document titled title, created at.
func publicObject(id, title string, at time.Time) *Object {
	return &Object{ID: id, Hash: "svc_" + id, Hashes: []string{"svc_" + id}, Visibility: contract.Public,
		MailboxStatus: StatusUnclaimed, Version: 1, Title: title, CreatedAt: at, UpdatedAt: at}
}

func directoryIDs(t *testing.T, s *Store, q DirectoryQuery) ([]string, string) {
	t.Helper()
	objs, next, err := s.Directory(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, o := range objs {
		ids = append(ids, o.ID)
	}
	return ids, next
}

// TestDirectoryPageReadsABudget: a page reads at most pageBudget entries per entry asked for, so
// a search that matches nothing, or only an old object, comes back short with a next position;
// following it reaches the match and then the end.
func TestDirectoryPageReadsABudget(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var all []string
	for i := range 12 {
		id := fmt.Sprintf("obj_dir%02d", i)
		title := "Plain"
		if i == 0 {
			title = "Rare needle"
		}
		if err := s.InsertObject(ctx, publicObject(id, title, t0.Add(time.Duration(i)*time.Minute))); err != nil {
			t.Fatal(err)
		}
		all = append([]string{id}, all...) // newest first
	}
	private := publicObject("obj_private", "Rare needle", t0)
	private.Visibility = "private"
	if err := s.InsertObject(ctx, private); err != nil {
		t.Fatal(err)
	}
	// A listing whose object insert failed is skipped.
	if err := s.putEntry(ctx, directoryKey("obj_gone"), directoryEntry{ObjectID: "obj_gone"}); err != nil {
		t.Fatal(err)
	}

	var seen []string
	for before, pages := "", 0; ; pages++ {
		ids, next := directoryIDs(t, s, DirectoryQuery{Before: before, Limit: 5})
		seen = append(seen, ids...)
		if next == "" {
			break
		}
		if pages > 3 {
			t.Fatal("the directory does not end")
		}
		before = next
	}
	if !slices.Equal(seen, all) {
		t.Fatalf("directory %v, want newest first %v", seen, all)
	}

	// limit 2 reads at most 8 entries: the needle is the 13th entry from the top.
	var found []string
	pages := 0
	for before := ""; ; pages++ {
		ids, next := directoryIDs(t, s, DirectoryQuery{Before: before, Limit: 2, Match: "NEEDLE"})
		found = append(found, ids...)
		if pages == 0 && (len(ids) != 0 || next == "") {
			t.Fatalf("first page of a search past the budget: %v, next %q (want none, and a next)", ids, next)
		}
		if next == "" {
			break
		}
		before = next
	}
	if !slices.Equal(found, []string{"obj_dir00"}) || pages != 1 {
		t.Fatalf("search found %v in %d pages, want the old public needle in 2", found, pages+1)
	}
	if ids, next := directoryIDs(t, s, DirectoryQuery{Limit: 50, Match: "nothing matches"}); len(ids) != 0 || next != "" {
		t.Fatalf("a search over less than its budget: %v, next %q", ids, next)
	}
	if err := s.RecordClaim(ctx, "obj_dir03", SocialHandle{Network: "dns", ClaimID: "clm_dir"}, t0); err != nil {
		t.Fatal(err)
	}
	if ids, _ := directoryIDs(t, s, DirectoryQuery{Limit: 50, Status: StatusClaimed}); !slices.Equal(ids, []string{"obj_dir03"}) {
		t.Fatalf("claimed objects %v", ids)
	}
}

// TestSubKeysAndAssociationsArePagedWithoutRemovedOnes: revoked keys and deleted associations are
// skipped; pages go newest first and end.
func TestSubKeysAndAssociationsArePagedWithoutRemovedOnes(t *testing.T) {
	t.Parallel()
	s, outbox := newStore(t)
	ctx := context.Background()
	now := time.Now()
	var keyIDs, ascIDs []string
	for i := range 5 {
		_, digest := apikey.Generate(apikey.SubPrefix)
		k := &Key{Digest: digest, KeyID: fmt.Sprintf("key_%d", i), ObjectID: "obj_lists", Label: fmt.Sprint(i), CreatedAt: now}
		if err := s.InsertKey(ctx, k); err != nil {
			t.Fatal(err)
		}
		keyIDs = append([]string{k.KeyID}, keyIDs...)
		a := &Association{ID: fmt.Sprintf("asc_%d", i), ObjectID: "obj_lists", PeerHash: "svc_peer", CreatedAt: now}
		if err := s.InsertAssociation(ctx, a); err != nil {
			t.Fatal(err)
		}
		ascIDs = append([]string{a.ID}, ascIDs...)
	}
	_, owner := apikey.Generate(apikey.OwnerPrefix)
	if err := s.InsertKey(ctx, &Key{Digest: owner, KeyID: "key_owner", ObjectID: "obj_lists", Owner: true, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"key_3", "key_1"} {
		if _, err := s.RevokeKey(ctx, "obj_lists", id, now, outbox, event(t, "key.revoked")); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"asc_4", "asc_2"} {
		if err := s.DeleteAssociation(ctx, "obj_lists", id, now); err != nil {
			t.Fatal(err)
		}
	}
	var keys []string
	for before := ""; ; {
		page, next, err := s.SubKeys(ctx, "obj_lists", Page{Before: before, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range page {
			keys = append(keys, k.KeyID)
		}
		if next == "" {
			break
		}
		before = next
	}
	if want := []string{"key_4", "key_2", "key_0"}; !slices.Equal(keys, want) {
		t.Fatalf("sub-keys %v, want %v (of %v)", keys, want, keyIDs)
	}
	var ascs []string
	for before := ""; ; {
		page, next, err := s.Associations(ctx, "obj_lists", Page{Before: before, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range page {
			ascs = append(ascs, a.ID)
		}
		if next == "" {
			break
		}
		before = next
	}
	if want := []string{"asc_3", "asc_1", "asc_0"}; !slices.Equal(ascs, want) {
		t.Fatalf("associations %v, want %v (of %v)", ascs, want, ascIDs)
	}
	if keys, _, _ := s.SubKeys(ctx, "obj_other", Page{Limit: 10}); len(keys) != 0 {
		t.Fatalf("another object lists %+v", keys)
	}
}

// TestProfileIsFoldedFromItsHeadUpwards: the highest version is found from the head even when
// the head was left behind (a lost concurrent raise), and versions out of the margin are pruned.
func TestProfileIsFoldedFromItsHeadUpwards(t *testing.T) {
	t.Parallel()
	s, _ := newStore(t)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := s.InsertObject(ctx, publicObject("obj_prof", "One", t0)); err != nil {
		t.Fatal(err)
	}
	for v := 2; v <= 30; v++ {
		if err := s.UpdateProfile(ctx, "obj_prof", v, fmt.Sprintf("v%d", v), t0.Add(time.Duration(v)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	// The head left at 20, as a lost raise would leave it.
	if _, err := s.db.Collection(Facts).UpdateOne(ctx, mongox.ByID(profileHeadID("obj_prof")),
		map[string]any{"$set": map[string]any{"seq": 20}}); err != nil {
		t.Fatal(err)
	}
	o, err := s.Object(ctx, "obj_prof")
	if err != nil || o.Version != 30 || o.Title != "v30" {
		t.Fatalf("folded profile %+v, %v", o, err)
	}
	var pruned fact
	if err := s.one(ctx, Facts, mongox.ByID(factID("obj_prof", factProfile, 30-keptProfiles-1)), &pruned); err == nil {
		t.Fatalf("version %d is kept", pruned.Seq)
	}
	if err := s.one(ctx, Facts, mongox.ByID(factID("obj_prof", factProfile, 30-keptProfiles)), &pruned); err != nil {
		t.Fatalf("version %d within the margin: %v", 30-keptProfiles, err)
	}
}

// TestUpgradeListsAnEarlierStoreOnce: what the releases before the ranges stored (objects,
// sub-keys, associations, claim and profile facts, written as they wrote them, and their
// mongox.Log lists) is listed by the upgrade in the ranges, newest first by id, and the old lists
// are dropped; a second run lists nothing more.
func TestUpgradeListsAnEarlierStoreOnce(t *testing.T) {
	t.Parallel()
	s, outbox := newStore(t)
	ctx := context.Background()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	// The previous release's writes: plain inserts, no lists, no profile head.
	for i := range 3 {
		if err := s.insert(ctx, Objects, publicObject(fmt.Sprintf("obj_old%d", i), "Old", t0)); err != nil {
			t.Fatal(err)
		}
	}
	private := publicObject("obj_oldprivate", "Old", t0)
	private.Visibility = "private"
	if err := s.insert(ctx, Objects, private); err != nil {
		t.Fatal(err)
	}
	_, digest := apikey.Generate(apikey.SubPrefix)
	if err := s.insert(ctx, Keys, &Key{Digest: digest, KeyID: "key_old", ObjectID: "obj_old0", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := s.insert(ctx, Associations, &Association{ID: "asc_old", ObjectID: "obj_old0", PeerHash: "svc_obj_old1", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	claim := SocialHandle{Network: "github", Handle: "ada", ClaimID: "clm_old"}
	if err := s.insert(ctx, Facts, fact{ID: factID("obj_old0", factClaim, "clm_old/t0"), ObjectID: "obj_old0", Kind: factClaim, Claim: &claim, At: t0}); err != nil {
		t.Fatal(err)
	}
	for v := 5; v <= 6; v++ { // earlier versions were pruned
		if err := s.insert(ctx, Facts, fact{ID: factID("obj_old0", factProfile, v), ObjectID: "obj_old0", Kind: factProfile, Seq: v,
			Title: fmt.Sprintf("v%d", v), At: t0}); err != nil {
			t.Fatal(err)
		}
	}
	// The release of the mongox.Log lists: its lists collection.
	if _, err := s.db.Collection(Lists).InsertOne(ctx, bson.D{{Key: "_id", Value: "directory#1"}, {Key: "seq", Value: 1},
		{Key: "v", Value: bson.D{{Key: "object_id", Value: "obj_old0"}}}}); err != nil {
		t.Fatal(err)
	}
	// A new object, created by this release before the upgrade ran.
	if err := s.InsertObject(ctx, publicObject("obj_new", "New", t0)); err != nil {
		t.Fatal(err)
	}

	n, err := s.Upgrade(ctx)
	if err != nil || n != 4+1+1+1+1+2 {
		t.Fatalf("upgrade listed %d, %v", n, err)
	}
	if names, err := s.db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: Lists}}); err != nil || len(names) != 0 {
		t.Fatalf("the old lists are still there: %v, %v", names, err)
	}
	check := func() {
		t.Helper()
		ids, _ := directoryIDs(t, s, DirectoryQuery{Limit: 50})
		if want := []string{"obj_old2", "obj_old1", "obj_old0", "obj_new"}; !slices.Equal(ids, want) {
			t.Fatalf("directory %v, want %v", ids, want)
		}
		keys, _, err := s.SubKeys(ctx, "obj_old0", Page{Limit: 10})
		if err != nil || len(keys) != 1 || keys[0].KeyID != "key_old" {
			t.Fatalf("sub-keys %+v, %v", keys, err)
		}
		ascs, _, err := s.Associations(ctx, "obj_old0", Page{Limit: 10})
		if err != nil || len(ascs) != 1 || ascs[0].ID != "asc_old" {
			t.Fatalf("associations %+v, %v", ascs, err)
		}
		o, err := s.Object(ctx, "obj_old0")
		if err != nil || o.Version != 6 || o.Title != "v6" || o.MailboxStatus != StatusClaimed || len(o.SocialHandles) != 1 {
			t.Fatalf("folded old object %+v, %v", o, err)
		}
	}
	check()
	if n, err := s.Upgrade(ctx); err != nil || n != 0 {
		t.Fatalf("second upgrade listed %d, %v", n, err)
	}
	check()
	if _, err := s.RevokeKey(ctx, "obj_old0", "key_old", t0, outbox, event(t, "key.revoked")); err != nil {
		t.Fatalf("revoke an older release's key by id: %v", err)
	}
	if _, err := s.RevokeKey(ctx, "obj_old0", "key_unknown", t0, outbox, event(t, "key.revoked")); !errors.Is(err, mongox.ErrNotFound) {
		t.Fatalf("revoke an unknown key id: %v", err)
	}
	if keys, _, _ := s.SubKeys(ctx, "obj_old0", Page{Limit: 10}); len(keys) != 0 {
		t.Fatalf("revoked key listed: %+v", keys)
	}
	// A run cut short before its marker runs again and lists nothing twice.
	if _, err := s.deleteOne(ctx, Migrations, mongox.ByID(rangesMigration)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Upgrade(ctx); err != nil {
		t.Fatal(err)
	}
	ids, _ := directoryIDs(t, s, DirectoryQuery{Limit: 50})
	if len(ids) != 4 {
		t.Fatalf("directory after a second run: %v", ids)
	}
}
