package mailbox_test

import (
	"context"
	"sync/atomic"
	"testing"

	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/mailbox-svc/internal/mailbox"
	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/testkit"
)

// docCounter counts the documents the database hands back (find, getMore and aggregate batches)
// and the commands sent.
type docCounter struct{ n, commands atomic.Int64 }

func (c *docCounter) monitor() *event.CommandMonitor {
	return &event.CommandMonitor{Started: func(context.Context, *event.CommandStartedEvent) { c.commands.Add(1) },
		Succeeded: func(_ context.Context, e *event.CommandSucceededEvent) {
			for _, batch := range []string{"firstBatch", "nextBatch"} {
				if arr, ok := e.Reply.Lookup("cursor", batch).ArrayOK(); ok {
					vals, _ := arr.Values()
					c.n.Add(int64(len(vals)))
				}
			}
		}}
}

// TestThreadReadCostIsBoundedByThePage reads one page of a long thread and counts what the
// database hands back: a read loads the page, not every inbound message and receipt of the thread.
// It marks read only the page it returns, and sends at most 5 commands (6 when it marks): the
// page is not the thread's last, so its last message is read for the counts.
func TestThreadReadCostIsBoundedByThePage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	thread := f.send(t, "svc_alice", "svc_bob", "", "start").Message.ThreadID
	const inbound = 150
	for range inbound - 1 {
		f.send(t, "svc_alice", "svc_bob", thread, "more")
	}

	var counter docCounter
	client, err := mongo.Connect(options.Client().ApplyURI(testkit.Backends(t).MongoURI).SetMonitor(counter.monitor()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })
	st := store.New(client.Database(f.db.Name()))
	threads := &mailbox.Threads{Store: st, Names: &mailbox.Names{Store: st, Identity: f.names.Identity, Log: f.names.Log}}

	const limit = 5
	for i, reader := range []string{"first read", "second read"} {
		counter.n.Store(0)
		counter.commands.Store(0)
		v, err := threads.Read(ctx, bob.ObjectID, thread, "", limit)
		if err != nil {
			t.Fatal(err)
		}
		if loaded := counter.n.Load(); loaded > 4*limit+10 {
			t.Errorf("%s of a page of %d loaded %d documents from a thread of %d inbound messages", reader, limit, loaded, inbound)
		}
		if sent, budget := counter.commands.Load(), []int64{6, 5}[i]; sent > budget {
			t.Errorf("%s sent %d commands, want at most %d", reader, sent, budget)
		}
		if len(v.Messages) != limit || v.UnreadCount != inbound-limit || v.MessageCount != inbound {
			t.Fatalf("%s: %d messages shown, %d of %d unread; want %d shown, %d unread",
				reader, len(v.Messages), v.UnreadCount, v.MessageCount, limit, inbound-limit)
		}
		for _, m := range v.Messages {
			if m.ReadAt == nil {
				t.Fatalf("%s: message %s of the page is not marked read", reader, m.ID)
			}
		}
	}
	key := store.ReadStateKey(bob.ObjectID, thread)
	if states, err := f.store.ReadStates(ctx, []string{key}); err != nil || states[key].Read != limit {
		t.Fatalf("bob's read state %+v, %v; want %d read (the page only)", states[key], err, limit)
	}
}
