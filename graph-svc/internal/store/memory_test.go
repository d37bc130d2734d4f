package store

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

// TestPostingsStoreScoredStemsAsOneString: a posting stores its entry's scored stems and counts
// as one string, not as two arrays, and reads them back as they were written; a posting of an
// earlier release (the two arrays) reads the same.
func TestPostingsStoreScoredStemsAsOneString(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testkit.Database(t, testkit.Backends(t), "graph")
	st := New(db)
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	e := MemoryEntry{NodeID: "nod_1", ThreadID: "thr_ab", Type: "message", AuthorID: "obj_a", CreatedAt: at,
		Excerpt: "Ship the kestrel on Friday.", Len: 5, Stems: []string{"kestrel", "ship", "friday", "été"}, Counts: []int{1, 2, 1, 3}}
	if err := st.IndexMemory(ctx, "obj_a", []MemoryEntry{e}, [][]string{{"kestrel"}}); err != nil {
		t.Fatal(err)
	}
	var raw bson.M
	if err := db.Collection(MemoryPostings).FindOne(ctx, mongox.ByID(PostingID("obj_a", "kestrel", at, "nod_1"))).Decode(&raw); err != nil {
		t.Fatal(err)
	}
	if raw["sc"] != "kestrel:1 ship:2 friday:1 été:3" || raw["st"] != nil || raw["tf"] != nil {
		t.Fatalf("stored posting: sc=%v st=%v tf=%v", raw["sc"], raw["st"], raw["tf"])
	}

	old := bson.D{{Key: "_id", Value: PostingID("obj_a", "kestrel", at.Add(time.Second), "nod_0")}, {Key: "n", Value: "nod_0"},
		{Key: "t", Value: "thr_ab"}, {Key: "ty", Value: "message"}, {Key: "a", Value: "obj_a"}, {Key: "c", Value: at.Add(time.Second)},
		{Key: "dl", Value: 2}, {Key: "st", Value: bson.A{"kestrel", "nest"}}, {Key: "tf", Value: bson.A{1, 1}}}
	if _, err := db.Collection(MemoryPostings).InsertOne(ctx, old); err != nil {
		t.Fatal(err)
	}
	got, err := st.Postings(ctx, mongox.Range{Scope: PostingScope("obj_a", "kestrel")})
	if err != nil || len(got) != 2 {
		t.Fatalf("postings: %+v %v", got, err)
	}
	if !slices.Equal(got[0].Stems, e.Stems) || !slices.Equal(got[0].Counts, e.Counts) {
		t.Fatalf("read back: %v %v, want %v %v", got[0].Stems, got[0].Counts, e.Stems, e.Counts)
	}
	if !slices.Equal(got[1].Stems, []string{"kestrel", "nest"}) || !slices.Equal(got[1].Counts, []int{1, 1}) {
		t.Fatalf("a posting of an earlier release read as %v %v", got[1].Stems, got[1].Counts)
	}
}
