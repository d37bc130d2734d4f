package app_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/graph-svc/app"
	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func graphDB(t *testing.T) *mongo.Database {
	t.Helper()
	db := testkit.Database(t, testkit.Backends(t), "graph")
	if err := mongox.EnsureIndexes(context.Background(), db, store.Indexes); err != nil {
		t.Fatal(err)
	}
	return db
}

// TestPreloadProjectsLikeTheConsumer: messages preloaded in bulk leave the thread's graph and
// msgs lists and both participants' memory index as the message projection leaves them, entry
// by entry.
func TestPreloadProjectsLikeTheConsumer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var msgs []contract.MessageCreatedData
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 60 {
		from, to := "obj_a", "obj_b"
		if i%3 == 0 {
			from, to = to, from
		}
		msgs = append(msgs, contract.MessageCreatedData{MessageID: fmt.Sprint("msg_", i), ThreadID: "thr_ab",
			FromObjectID: from, FromHash: "svc_" + from[4:], ToObjectID: to, ToHash: "svc_" + to[4:],
			Body: fmt.Sprintf("note %d about the kestrel %d", i, i%7), CreatedAt: base.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano)})
	}
	projected, loaded := store.New(graphDB(t)), graphDB(t)
	svc := &graph.Service{Store: projected, Limits: graph.DefaultLimits}
	for start := 0; start < len(msgs); start += 7 {
		if err := svc.ProjectMessages(ctx, msgs[start:min(start+7, len(msgs))]); err != nil {
			t.Fatal(err)
		}
	}
	p := app.NewPreloader(loaded)
	for start := 0; start < len(msgs); start += 25 {
		if err := p.Messages(ctx, msgs[start:min(start+25, len(msgs))]); err != nil {
			t.Fatal(err)
		}
	}
	st := store.New(loaded)
	want, _, err := projected.GraphPage(ctx, "thr_ab", "", nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := st.GraphPage(ctx, "thr_ab", "", nil, 100)
	if err != nil || len(got) != len(msgs) || len(want) != len(got) {
		t.Fatalf("graph pages: %d projected, %d preloaded (%v); want %d", len(want), len(got), err, len(msgs))
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.Key != g.Key || w.Value.MsgSeq != g.Value.MsgSeq || w.Value.Node.ID != g.Value.Node.ID || w.Value.Node.Body != g.Value.Node.Body {
			t.Fatalf("graph entry %d: projected %+v, preloaded %+v", i, w, g)
		}
	}
	for _, obj := range []string{"obj_a", "obj_b"} {
		w, errW := projected.MemoryStatsOf(ctx, obj)
		g, errG := st.MemoryStatsOf(ctx, obj)
		if errW != nil || errG != nil || w.Nodes != g.Nodes || g.Nodes != int64(len(msgs)) {
			t.Fatalf("%s's memory index: projected %d %v, preloaded %d %v", obj, w.Nodes, errW, g.Nodes, errG)
		}
	}
	if n, err := st.MessageCount(ctx, "thr_ab"); err != nil || n != int64(len(msgs)) {
		t.Fatalf("msgs list: %d %v", n, err)
	}
	// The projection, handed the preloaded messages again, adds nothing.
	if err := (&graph.Service{Store: st, Limits: graph.DefaultLimits}).ProjectMessages(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	if again, _, err := st.GraphPage(ctx, "thr_ab", "", nil, 200); err != nil || len(again) != len(msgs) {
		t.Fatalf("graph after a redelivery: %d %v", len(again), err)
	}
}
