package graph_test

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

// TestListsUpgradeCarriesGraphLog: lists written in the previous layout (graph_log entries
// "<list>#<n>" with a head hint and a key mark, written here directly) read the same through
// the data-keyed lists once UpgradeLists ran (twice here): the thread's graph with its message
// chain, guidance versions, a quota's slots, the decisions count, sources with their state and
// the threads of an object; graph_log is gone.
func TestListsUpgradeCarriesGraphLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testkit.Database(t, testkit.Backends(t), "graph")
	if err := mongox.EnsureIndexes(ctx, db, store.Indexes); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)
	m1 := &store.Node{ID: "nod_msg_1", ThreadID: "thr_ab", Type: "message", Body: "hello", Visibility: "participants",
		AuthorID: "obj_a", AuthorHash: "svc_a", MessageID: "msg_1", CreatedAt: at}
	m2 := &store.Node{ID: "nod_msg_2", ThreadID: "thr_ab", Type: "message", Body: "hi back", Visibility: "participants",
		AuthorID: "obj_b", AuthorHash: "svc_b", MessageID: "msg_2", CreatedAt: at.Add(time.Minute)}
	ev := &store.Node{ID: "nod_ev", ThreadID: "thr_ab", Type: "evidence", Body: "a fact", Visibility: "participants",
		AuthorID: "obj_a", AuthorHash: "svc_a", CreatedAt: at.Add(2 * time.Minute)}
	src := store.Source{ID: "src_1", ThreadID: "ths_obj_a", OwnerID: "obj_a", OwnerHash: "svc_a", Kind: "url",
		URL: "https://example.com", FetchURL: "https://example.com", Visibility: "participants", CreatedAt: at}
	pull := &store.Pull{ID: "pul_1", SourceID: "src_1", At: at, Status: "error", Error: "boom"}
	entry := func(id string, n int64, v any) any {
		return bson.D{{Key: "_id", Value: id}, {Key: "seq", Value: n}, {Key: "at", Value: at}, {Key: "v", Value: v}}
	}
	old := []any{
		entry("thread:thr_ab#1", 1, store.GraphItem{Node: m1, MsgSeq: 1}),
		entry("thread:thr_ab#2", 2, store.GraphItem{Node: ev}),
		entry("thread:thr_ab#3", 3, store.GraphItem{Node: m2, MsgSeq: 2}),
		entry("msgs:thr_ab#1", 1, store.MessageRef{NodeID: m1.ID, CreatedAt: m1.CreatedAt}),
		entry("msgs:thr_ab#2", 2, store.MessageRef{NodeID: m2.ID, CreatedAt: m2.CreatedAt}),
		entry("guidance:thr_ab/obj_a#1", 1, store.GuidanceVersion{Body: "first", CreatedAt: at}),
		entry("guidance:thr_ab/obj_a#2", 2, store.GuidanceVersion{Body: "second", CreatedAt: at}),
		entry("quota:nodes:thr_ab/obj_a#1", 1, "nod_ev"),
		entry("decisions:obj_a#1", 1, store.DecisionRef{NodeID: "nod_d", ThreadID: "thr_ab", Title: "Go", CreatedAt: at}),
		entry("sources:ths_obj_a#1", 1, src),
		entry("pulls:src_1#1", 1, store.PullSummary{Latest: pull, LatestError: pull}),
		entry("threads:obj_a#1", 1, "thr_ab"),
		bson.D{{Key: "_id", Value: "thread:thr_ab#head"}, {Key: "seq", Value: 3}},
		bson.D{{Key: "_id", Value: "threads:obj_a@thr_ab"}, {Key: "seq", Value: 1}},
	}
	if _, err := db.Collection(store.GraphLog).InsertMany(ctx, old); err != nil {
		t.Fatal(err)
	}
	st := store.New(db)
	if err := st.AddThread(ctx, &store.Thread{ID: "thr_ab", Participants: []string{"obj_a", "obj_b"}, CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := st.UpgradeLists(ctx); err != nil {
			t.Fatal(err)
		}
	}
	svc := &graph.Service{Store: st, Limits: graph.DefaultLimits, Mailbox: mailbox{}}
	g, err := svc.Graph(ctx, bob, "thr_ab", graph.GraphPage{Limit: 50})
	if err != nil || len(g.Nodes) != 3 || len(g.Edges) != 1 || g.Edges[0].From != m2.ID || g.Edges[0].To != m1.ID {
		t.Fatalf("graph after the upgrade: %+v %v", g, err)
	}
	gv, err := svc.Guidance(ctx, alice, "thr_ab", 0, 10, nil)
	if err != nil || gv.Body != "second" || gv.Version != 2 || len(gv.Versions) != 2 {
		t.Fatalf("guidance after the upgrade: %+v %v", gv, err)
	}
	if v, err := svc.PutGuidance(ctx, alice, "thr_ab", "third"); err != nil || v.Version != 3 {
		t.Fatalf("a guidance write after the upgrade: %+v %v", v, err)
	}
	if n, err := st.QuotaUsed(ctx, "quota:nodes:thr_ab/obj_a"); err != nil || n != 1 {
		t.Fatalf("quota slots after the upgrade: %d %v", n, err)
	}
	if n, latest, err := st.Decisions(ctx, "obj_a"); err != nil || n != 1 || latest.Title != "Go" {
		t.Fatalf("decisions after the upgrade: %d %+v %v", n, latest, err)
	}
	srcs, _, err := st.SourcesPage(ctx, "ths_obj_a", "", 10)
	if err != nil || len(srcs) != 1 || srcs[0].Value.ID != "src_1" {
		t.Fatalf("sources after the upgrade: %+v %v", srcs, err)
	}
	if sum, err := st.PullSummaryOf(ctx, "src_1"); err != nil || sum.LatestError == nil || sum.LatestError.Error != "boom" {
		t.Fatalf("source state after the upgrade: %+v %v", sum, err)
	}
	if ids, err := st.ThreadsPage(ctx, "obj_a", 10); err != nil || len(ids) != 1 || ids[0] != "thr_ab" {
		t.Fatalf("threads after the upgrade: %v %v", ids, err)
	}
	names, err := db.ListCollectionNames(ctx, bson.D{{Key: "name", Value: store.GraphLog}})
	if err != nil || len(names) != 0 {
		t.Fatalf("graph_log is still there: %v %v", names, err)
	}
}
