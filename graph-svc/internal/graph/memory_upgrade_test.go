package graph_test

import (
	"context"
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
