package app_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/event"

	"github.com/svcdev/svc/feed-svc/app"
	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

// BenchmarkPreload preloads BENCH_PRELOAD_EVENTS events (default 2,000) of the scale benchmark's
// mix (deploy/e2e's feed phase: of every ten, an object's creation, a message to it and eight
// items, half of them in one bench box) into a new store, and prints the documents inserted a
// second and the store commands an event.
func BenchmarkPreload(b *testing.B) {
	n := 2000
	if raw := os.Getenv("BENCH_PRELOAD_EVENTS"); raw != "" {
		if v, err := strconv.Atoi(raw); err == nil && v > 0 {
			n = v
		}
	}
	ctx := context.Background()
	evs := scaleMix(b, n)
	var commands, inserted atomic.Int64
	monitor := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		commands.Add(1)
		if docs, ok := e.Command.Lookup("documents").ArrayOK(); e.CommandName == "insert" && ok {
			if vs, err := docs.Values(); err == nil {
				inserted.Add(int64(len(vs)))
			}
		}
	}}
	be := testkit.Backends(b)
	for i := range b.N {
		client, db, err := mongox.Connect(ctx, be.MongoURI, fmt.Sprintf("%s_bench%d", be.Name, i), monitor)
		if err != nil {
			b.Fatal(err)
		}
		if err := mongox.EnsureIndexes(ctx, db, store.Indexes); err != nil {
			b.Fatal(err)
		}
		commands.Store(0)
		inserted.Store(0)
		start := time.Now()
		if err := app.Preload(ctx, db, evs); err != nil {
			b.Fatal(err)
		}
		took, cmds := time.Since(start), commands.Load()
		b.ReportMetric(float64(inserted.Load())/took.Seconds(), "docs/s")
		b.ReportMetric(float64(cmds)/float64(n), "cmds/event")
		b.ReportMetric(float64(n)/took.Seconds(), "events/s")
		_ = db.Drop(ctx)
		_ = client.Disconnect(ctx)
	}
}

// scaleMix is n events of the scale benchmark's feed phase (deploy/e2e scaleEvents), after the
// bench box's creation.
func scaleMix(tb testing.TB, n int) []events.Event {
	ev := func(topic, typ, obj, hash string, data any) events.Event {
		return testkit.Consumed(tb, events.MustNew(topic, typ, obj, hash, "", data))
	}
	bench, benchHash := "obj_bench", "svc_bench"
	out := []events.Event{ev(events.TopicIdentity, events.ObjectCreated, bench, benchHash,
		contract.ObjectCreatedData{Object: contract.Object{ObjectID: bench, Hash: benchHash, Visibility: "public", Title: "Bench"}})}
	posted := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		obj, hash := fmt.Sprintf("obj_scale_%d", i/10*10), fmt.Sprintf("svc_scale_%d", i/10*10)
		switch {
		case i%10 == 0:
			out = append(out, ev(events.TopicIdentity, events.ObjectCreated, obj, hash,
				contract.ObjectCreatedData{Object: contract.Object{ObjectID: obj, Hash: hash, Visibility: "public", Title: "Scale " + hash}}))
		case i%10 == 1:
			out = append(out, ev(events.TopicMailbox, events.MessageCreated, obj, hash, contract.MessageCreatedData{MessageID: fmt.Sprint("msg_", i)}))
		default:
			box, boxHash := obj, hash
			if i%2 == 0 {
				box, boxHash = bench, benchHash
			}
			out = append(out, ev(events.TopicFeed, events.FeedItemPublished, box, boxHash, contract.FeedItemPublishedData{
				ItemID: fmt.Sprint("itm_", i), Title: fmt.Sprintf("scale item %d", i), Body: strings.Repeat("body ", 200),
				Tags: []string{"working"}, AuthorObjectID: bench, AuthorHash: &benchHash, AuthorName: "Bench",
				PostedAt: posted.Add(time.Duration(i) * time.Millisecond).Format(time.RFC3339Nano)}))
		}
	}
	return out
}
