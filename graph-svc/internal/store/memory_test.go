package store

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

// TestPostingsStoreScoredStemsOncePerNode: a posting stores its own stem's count and not the
// node's scored stems, which are stored once per node (one document for the two indexes that
// hold the node, none more on a redelivery) as one string, and read back as they were written;
// postings of earlier releases (the stems as one string, or as two arrays) read with their
// stems.
func TestPostingsStoreScoredStemsOncePerNode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testkit.Database(t, testkit.Backends(t), "graph")
	st := New(db)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	e := MemoryEntry{NodeID: "nod_1", ThreadID: "thr_ab", Type: "message", AuthorID: "obj_a", CreatedAt: at,
		Excerpt: "Ship the kestrel on Friday.", Len: 5, Stems: []string{"kestrel", "ship", "friday", "été"}, Counts: []int{1, 2, 1, 3}}
	batches := []MemoryBatch{{ObjectID: "obj_a", Entries: []MemoryEntry{e}, Indexed: [][]string{{"kestrel", "ship"}}},
		{ObjectID: "obj_b", Entries: []MemoryEntry{e}, Indexed: [][]string{{"kestrel", "ship"}}}}
	for range 2 { // the second time as a redelivery
		if err := st.IndexMemories(ctx, batches); err != nil {
			t.Fatal(err)
		}
	}
	var stored bson.D
	if err := db.Collection(MemoryPostings).FindOne(ctx, mongox.ByID(PostingID("obj_a", "ship", at, "nod_1"))).Decode(&stored); err != nil {
		t.Fatal(err)
	}
	var packed bson.Binary
	ok := len(stored) == 2 && stored[1].Key == "e"
	if ok {
		packed, ok = stored[1].Value.(bson.Binary)
	}
	if !ok {
		t.Fatalf("stored posting %v; want its _id and its entry packed as binary in e", stored)
	}
	var raw bson.M
	if err := bson.Unmarshal(packed.Data, &raw); err != nil {
		t.Fatal(err)
	}
	if raw["sc"] != nil || raw["st"] != nil || raw["tf"] != nil || raw["f"] != int32(2) || raw["x"] != nil || raw["t"] != nil {
		t.Fatalf("packed entry: sc=%v st=%v tf=%v f=%v x=%v t=%v; want its stem's count 2, no stems and no display", raw["sc"], raw["st"], raw["tf"], raw["f"], raw["x"], raw["t"])
	}
	scored, err := mongox.FindAll[bson.M](ctx, db.Collection(MemoryPostings), mongox.Range{Scope: mongox.Scope("s")}.Filter())
	if err != nil || len(scored) != 1 || scored[0]["_id"] != scoredID("nod_1") || scored[0]["sc"] != "kestrel:1 ship:2 friday:1 été:3" ||
		scored[0]["x"] != e.Excerpt || scored[0]["t"] != e.ThreadID {
		t.Fatalf("cards stored: %v %v; want one document of nod_1's, with its stems, thread and excerpt", scored, err)
	}
	if stats, err := st.MemoryStatsOf(ctx, "obj_b"); err != nil || stats.Nodes != 1 {
		t.Fatalf("obj_b's stats after a redelivery: %+v %v", stats, err)
	}
	got, _, err := st.Cards(ctx, []string{"nod_1", "nod_1", "nod_missing"}, nil)
	if err != nil || len(got) != 1 || !slices.Equal(got["nod_1"].Stems, e.Stems) || !slices.Equal(got["nod_1"].Counts, e.Counts) ||
		got["nod_1"].Excerpt != e.Excerpt || got["nod_1"].ThreadID != e.ThreadID {
		t.Fatalf("cards read back: %+v %v; want nod_1's %v %v, its thread and excerpt", got, err, e.Stems, e.Counts)
	}

	posting := func(node string, c time.Time, stems ...bson.E) bson.D {
		return append(bson.D{{Key: "_id", Value: PostingID("obj_a", "kestrel", c, node)}, {Key: "n", Value: node},
			{Key: "t", Value: "thr_ab"}, {Key: "ty", Value: "message"}, {Key: "a", Value: "obj_a"}, {Key: "c", Value: c},
			{Key: "dl", Value: 2}}, stems...)
	}
	old := []any{posting("nod_0", at.Add(time.Second), bson.E{Key: "st", Value: bson.A{"kestrel", "nest"}}, bson.E{Key: "tf", Value: bson.A{1, 1}}),
		posting("nod_2", at.Add(2*time.Second), bson.E{Key: "sc", Value: "kestrel:3 nest:1"})}
	if _, err := db.Collection(MemoryPostings).InsertMany(ctx, old); err != nil {
		t.Fatal(err)
	}
	read, err := st.Postings(ctx, mongox.Range{Scope: PostingScope("obj_a", "kestrel")})
	if err != nil || len(read) != 3 {
		t.Fatalf("postings: %+v %v", read, err)
	}
	if read[0].Stems != nil || read[0].Count != 1 {
		t.Fatalf("read back: stems %v, count %d; want no stems, count 1", read[0].Stems, read[0].Count)
	}
	if !slices.Equal(read[1].Stems, []string{"kestrel", "nest"}) || !slices.Equal(read[1].Counts, []int{1, 1}) {
		t.Fatalf("a posting of an earlier release (arrays) read as %v %v", read[1].Stems, read[1].Counts)
	}
	if !slices.Equal(read[2].Stems, []string{"kestrel", "nest"}) || !slices.Equal(read[2].Counts, []int{3, 1}) {
		t.Fatalf("a posting of an earlier release (one string) read as %v %v", read[2].Stems, read[2].Counts)
	}
}

// TestHashCopiesFollowTheProjection: a search reads the hashes its hits name beside the cards
// (Cards). The copies hold what the projection holds, never a message's hash for an object the
// projection already held (it may be older than a change), and follow every change; objects
// projected before copies existed and named by no message since are read from the projection
// until UpgradeHashCopies copies them, which never overwrites a newer copy.
func TestHashCopiesFollowTheProjection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testkit.Database(t, testkit.Backends(t), "graph")
	st := New(db)
	// obj_old, obj_changed and obj_legacy were projected before copies existed; obj_changed has
	// changed since.
	if _, err := db.Collection(Hashes).InsertMany(ctx, []any{ObjectHash{ObjectID: "obj_old", Hash: "svc_old"},
		ObjectHash{ObjectID: "obj_changed", Hash: "svc_first"}, ObjectHash{ObjectID: "obj_legacy", Hash: "svc_legacy"}}); err != nil {
		t.Fatal(err)
	}
	if err := st.SetHash(ctx, "obj_changed", "svc_second"); err != nil {
		t.Fatal(err)
	}
	// A message names obj_new for the first time, and obj_old with a hash older than its own.
	if err := st.RememberHashes(ctx, []ObjectHash{{ObjectID: "obj_new", Hash: "svc_new"}, {ObjectID: "obj_old", Hash: "svc_stale"}}); err != nil {
		t.Fatal(err)
	}
	copies := func() map[string]string {
		t.Helper()
		docs, err := mongox.FindAll[hashCopy](ctx, db.Collection(MemoryPostings), mongox.Range{Scope: hashCopyScope}.Filter())
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, d := range docs {
			out[d.ID] = d.Hash
		}
		return out
	}
	want := map[string]string{hashCopyID("obj_new"): "svc_new", hashCopyID("obj_changed"): "svc_second", hashCopyID("obj_old"): "svc_old"}
	if got := copies(); !maps.Equal(got, want) {
		t.Fatalf("copies: %v, want %v (the projection's hashes, not the message's)", got, want)
	}
	all := []string{"obj_old", "obj_changed", "obj_new", "obj_legacy", "obj_unknown"}
	wantHashes := map[string]string{"obj_old": "svc_old", "obj_changed": "svc_second", "obj_new": "svc_new", "obj_legacy": "svc_legacy"}
	if _, hashes, err := st.Cards(ctx, nil, all); err != nil || !maps.Equal(hashes, wantHashes) {
		t.Fatalf("hashes before the copy: %v %v, want %v", hashes, err, wantHashes)
	}
	for range 2 { // the second run stops at the record of the first
		if err := st.UpgradeHashCopies(ctx); err != nil {
			t.Fatal(err)
		}
	}
	want[hashCopyID("obj_legacy")] = "svc_legacy"
	if got := copies(); !maps.Equal(got, want) {
		t.Fatalf("copies after the upgrade: %v, want %v", got, want)
	}
	if _, hashes, err := st.Cards(ctx, nil, all); err != nil || !maps.Equal(hashes, wantHashes) {
		t.Fatalf("hashes after the copy: %v %v, want %v", hashes, err, wantHashes)
	}
}
