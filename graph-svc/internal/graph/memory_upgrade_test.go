package graph_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

// TestMemoryUpgradeCarriesTheOldIndex: an index written in the previous layout (positions
// "e|<object>|<n>", presence marks and a head hint, written here directly) is found by searches
// once UpgradeMemory ran, by the stems it indexed only; a second run adds nothing, and the old
// collection is gone.
func TestMemoryUpgradeCarriesTheOldIndex(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testkit.Database(t, testkit.Backends(t), "graph")
	if err := mongox.EnsureIndexes(ctx, db, store.Indexes); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	old := []any{
		bson.D{{Key: "_id", Value: "e|obj_a|1"}, {Key: "n", Value: "nod_1"}, {Key: "t", Value: "thr_ab"}, {Key: "ty", Value: "decision"},
			{Key: "p", Value: "obj_b"}, {Key: "a", Value: "obj_a"}, {Key: "c", Value: at}, {Key: "ti", Value: "Ship the kestrel"},
			{Key: "x", Value: "Ship the kestrel on Friday."}, {Key: "dl", Value: 4},
			{Key: "st", Value: bson.A{"ship", "kestrel", "friday"}}, {Key: "tf", Value: bson.A{2, 1, 1}}},
		bson.D{{Key: "_id", Value: "e|obj_b|1"}, {Key: "n", Value: "nod_1"}, {Key: "t", Value: "thr_ab"}, {Key: "ty", Value: "decision"},
			{Key: "p", Value: "obj_a"}, {Key: "a", Value: "obj_a"}, {Key: "c", Value: at}, {Key: "ti", Value: "Ship the kestrel"},
			{Key: "x", Value: "Ship the kestrel on Friday."}, {Key: "dl", Value: 4},
			{Key: "st", Value: bson.A{"ship", "kestrel", "friday"}}, {Key: "tf", Value: bson.A{2, 1, 1}}},
		bson.D{{Key: "_id", Value: "h|obj_a"}, {Key: "seq", Value: 1}},
		bson.D{{Key: "_id", Value: "p|obj_a|1|0|ship"}},
	}
	if _, err := db.Collection(store.MemoryIndex).InsertMany(ctx, old); err != nil {
		t.Fatal(err)
	}
	st := store.New(db)
	svc := &graph.Service{Store: st, Limits: graph.DefaultLimits}
	for range 2 {
		if err := st.UpgradeMemory(ctx, 2); err != nil { // two indexed stems: "friday" was scored only
			t.Fatal(err)
		}
	}
	for _, who := range []*contract.Principal{alice, bob} {
		res, err := svc.SearchMemory(ctx, who, graph.MemoryQuery{Q: "kestrel ships", Limit: 10})
		if err != nil || len(res.Hits) != 1 || res.Hits[0].NodeID != "nod_1" || res.Hits[0].Excerpt != "Ship the kestrel on Friday." {
			t.Fatalf("%s's search after the upgrade: %+v %v", who.ObjectID, res, err)
		}
		if res, err := svc.SearchMemory(ctx, who, graph.MemoryQuery{Q: "friday", Limit: 10}); err != nil || len(res.Hits) != 0 {
			t.Fatalf("%s found the node by a stem it did not index: %+v %v", who.ObjectID, res, err)
		}
		if stats, err := st.MemoryStatsOf(ctx, who.ObjectID); err != nil || stats.Nodes != 1 || !stats.First.Equal(at) {
			t.Fatalf("%s's index stats after two runs: %+v %v", who.ObjectID, stats, err)
		}
	}
	names, err := db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: store.MemoryIndex}})
	if err != nil || len(names) != 0 {
		t.Fatalf("the old index is still there: %v %v", names, err)
	}
}

// TestPostingsUpgrade: postings of the previous layout (without the index's stats or their
// nodes' validity facts, written here directly beside the stats and a fact) are completed once
// UpgradePostings ran: the node a decision superseded is left out of a search unless asked
// for, and shown superseded by that decision; the scores weigh the terms by the whole index
// again. A second run changes nothing.
func TestPostingsUpgrade(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testkit.Database(t, testkit.Backends(t), "graph")
	if err := mongox.EnsureIndexes(ctx, db, store.Indexes); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	posting := func(node, stem, other string, c time.Time) bson.D {
		return bson.D{{Key: "_id", Value: store.PostingID("obj_a", stem, c, node)}, {Key: "n", Value: node}, {Key: "t", Value: "thr_ab"},
			{Key: "ty", Value: "evidence"}, {Key: "p", Value: "obj_b"}, {Key: "a", Value: "obj_a"}, {Key: "c", Value: c},
			{Key: "x", Value: "The kestrel " + node}, {Key: "dl", Value: 2},
			{Key: "st", Value: bson.A{"kestrel", other}}, {Key: "tf", Value: bson.A{1, 1}}}
	}
	old := []any{bson.D{{Key: "_id", Value: "n|obj_a"}, {Key: "nodes", Value: int64(40)}, {Key: "first", Value: at}}}
	for i, node := range []string{"nod_1", "nod_2", "nod_3"} {
		c := at.Add(time.Duration(i) * time.Hour)
		w := fmt.Sprint("w", i)
		old = append(old, posting(node, "kestrel", w, c), posting(node, w, w, c))
	}
	if _, err := db.Collection(store.MemoryPostings).InsertMany(ctx, old); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection(store.Validity).InsertOne(ctx, bson.D{{Key: "_id", Value: "nod_2"}, {Key: "thread_id", Value: "thr_ab"},
		{Key: "by", Value: "nod_9"}, {Key: "invalid_at", Value: at.Add(5 * time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	st := store.New(db)
	svc := &graph.Service{Store: st, Limits: graph.DefaultLimits}
	search := func(q graph.MemoryQuery) *graph.MemoryResult {
		t.Helper()
		q.Limit = 10
		res, err := svc.SearchMemory(ctx, alice, q)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	before := search(graph.MemoryQuery{Q: "kestrel w1"})
	for range 2 {
		if err := st.UpgradePostings(ctx); err != nil {
			t.Fatal(err)
		}
	}
	res := search(graph.MemoryQuery{Q: "kestrel w1"})
	if got := nodeIDs(res.Hits); !slices.Equal(got, []string{"nod_3", "nod_1"}) {
		t.Fatalf("after the upgrade kestrel w1 found %v, want nod_3 and nod_1 (nod_2 superseded)", got)
	}
	if got := nodeIDs(before.Hits); len(got) != 3 || got[0] != "nod_2" {
		t.Fatalf("before the upgrade kestrel w1 found %v, want nod_2 first of three", got)
	}
	res = search(graph.MemoryQuery{Q: "kestrel w1", IncludeSuperseded: true})
	if len(res.Hits) != 3 || res.Hits[0].NodeID != "nod_2" || res.Hits[0].SupersededBy == nil || *res.Hits[0].SupersededBy != "nod_9" ||
		res.Hits[0].SupersededAt == nil {
		t.Fatalf("with include_superseded: %+v", res.Hits)
	}
	if res.Hits[0].Score <= before.Hits[0].Score {
		t.Errorf("nod_2 scored %v over 40 nodes, %v over the 3 read: the rare term should weigh more", res.Hits[0].Score, before.Hits[0].Score)
	}
	asOf := at.Add(4 * time.Hour)
	if res := search(graph.MemoryQuery{Q: "kestrel w1", AsOf: &asOf}); len(res.Hits) != 3 || res.Hits[0].SupersededBy != nil {
		t.Fatalf("as of before the decision nod_2 is current: %+v", res.Hits)
	}
}

// TestParticipationUpgrade: the authors of nodes an earlier release stored (written here
// directly, with no participation mark) count as having taken part in their threads once
// UpgradeTookPart ran, so the other side's next decision reaches their decision memory.
func TestParticipationUpgrade(t *testing.T) {
	t.Parallel()
	svc, ob := newService(t)
	ctx := context.Background()
	if err := svc.Store.InsertNode(ctx, &store.Node{ID: "nod_old", ThreadID: "thr_ab", Type: "message", Body: "old reply",
		Visibility: graph.Participants, AuthorID: "obj_b", CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := svc.Store.(*store.Store).UpgradeTookPart(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Decide(ctx, "req", alice, "thr_ab", graph.DecisionDraft{Title: "t", Body: "b"}); err != nil {
		t.Fatal(err)
	}
	toBob := 0
	for _, ev := range ob.evs {
		if ev.Key == "obj_b" {
			toBob++
			if !strings.Contains(ev.Payload, `"accepted":true`) {
				t.Errorf("bob's decision.recorded after the upgrade: %s", ev.Payload)
			}
		}
	}
	if toBob != 1 {
		t.Errorf("%d decision.recorded events for bob, want 1", toBob)
	}
}
