package graph_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/outbound"
	"github.com/svcdev/svc/pkg/testkit"
)

// TestGraphPageCostsAPage: reading the newest page of a thread's graph sends as many store
// commands with 20 nodes stored as with 520 (and as many with other threads' nodes in the
// store), and the page itself is one find of the thread's graph range: a page costs its items,
// not the history. A thread read before is not read again (its record never changes): a page is
// three commands.
func TestGraphPageCostsAPage(t *testing.T) {
	t.Parallel()
	cmds := &commandLog{counts: map[string]int{}}
	svc := monitoredService(t, "cost", cmds.started)
	ctx := context.Background()
	if _, err := svc.AddNode(ctx, alice, "thr_ab", graph.NodeDraft{Type: "evidence", Body: "the first"}); err != nil {
		t.Fatal(err) // through the use case once, so that the thread and the hashes are known
	}
	written := 0
	write := func(who *contract.Principal, thread string, n int) { // the graph's own writes, in one insert
		items := make([]store.GraphItem, n)
		for i := range items {
			written++
			items[i] = store.GraphItem{Node: &store.Node{ID: fmt.Sprint("nod_", written), ThreadID: thread, Type: "evidence",
				Body: fmt.Sprint("node ", i), Visibility: graph.Participants, AuthorID: who.ObjectID, AuthorHash: who.Hash,
				CreatedAt: clock.Now()}}
		}
		if err := svc.Store.AppendGraphItems(ctx, thread, items); err != nil {
			t.Fatal(err)
		}
	}
	read := func() map[string]int {
		cmds.take()
		g, err := svc.Graph(ctx, bob, "thr_ab", graph.GraphPage{Limit: 10})
		if err != nil || len(g.Nodes) != 10 {
			t.Fatalf("page of %d nodes, %v", len(g.Nodes), err)
		}
		return cmds.take()
	}
	write(alice, "thr_ab", 19)
	small := read()
	write(alice, "thr_ab", 250)
	write(bob, "thr_ab", 250)
	large := read()
	t.Logf("store commands of a 10-node page: %d with 20 nodes stored, %d with 520 (%v); of the graph's range: %d",
		cmds.total(small), cmds.total(large), large, large[store.Lists])
	if cmds.total(large) != cmds.total(small) {
		t.Fatalf("a page cost %d store commands with 520 nodes stored, %d with 20", cmds.total(large), cmds.total(small))
	}
	if large[store.Lists] != 1 {
		t.Fatalf("a page sent %d commands to the lists, want one find", large[store.Lists])
	}
	if large[store.Threads] != 0 || cmds.total(large) != 3 {
		t.Fatalf("a page of a thread read before cost %v; want the other side's hash, the page and its validity facts, no read of the thread", large)
	}
}

// monitoredService returns a service on a database of its own whose client hands every command
// it sends to started, so that a test counts the store commands of a use case.
func monitoredService(tb testing.TB, suffix string, started func(context.Context, *event.CommandStartedEvent)) *graph.Service {
	tb.Helper()
	env := testkit.Backends(tb)
	client, err := mongo.Connect(options.Client().ApplyURI(env.MongoURI).SetMonitor(&event.CommandMonitor{Started: started}))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	db := client.Database(env.Name + "_" + suffix)
	tb.Cleanup(func() { _ = db.Drop(context.Background()) })
	return serviceOn(tb, db)
}

// serviceOn is a service over db, its indexes made and the one-off copy of object hashes run, as
// the app does at start-up.
func serviceOn(tb testing.TB, db *mongo.Database) *graph.Service {
	tb.Helper()
	if err := mongox.EnsureIndexes(context.Background(), db, append(store.Indexes, events.OutboxIndexes...)); err != nil {
		tb.Fatal(err)
	}
	st := store.New(db)
	if err := st.UpgradeHashCopies(context.Background()); err != nil {
		tb.Fatal(err)
	}
	lim, err := outbound.NewLimiter(outbound.LimiterOptions{Max: 1})
	if err != nil {
		tb.Fatal(err)
	}
	return &graph.Service{Limits: graph.DefaultLimits, Schedule: graph.Schedule{Interval: time.Hour, Scan: time.Minute},
		Store: st, Mailbox: mailbox{}, Limiter: lim, Log: testkit.Logger(tb),
		Outbox: &confirmed{Outbox: events.NewOutbox(db, nil, testkit.Logger(tb), events.OutboxOptions{})}}
}

// restarted is a service over s's store that remembers nothing, as after a restart.
func restarted(s *graph.Service) *graph.Service {
	return &graph.Service{Limits: s.Limits, Schedule: s.Schedule, Store: s.Store, Mailbox: s.Mailbox, Outbox: s.Outbox,
		Limiter: s.Limiter, Log: s.Log}
}
