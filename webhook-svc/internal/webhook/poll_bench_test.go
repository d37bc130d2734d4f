package webhook

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/event"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// BenchmarkPoll measures the sender's poll with a handful of deliveries waiting for a retry,
// beside 0 and 20,000 final deliveries kept for the delivery log, and prints store commands and
// time per poll. "schedule" is the poll (a read of the due entries); "deliveries-scan" is, for
// comparison, the query the poll made before the schedule existed. On FerretDB only `_id`
// equality reaches the SQL backend, so the scan's cost follows the stored deliveries and the
// schedule's does not; the ratio, not the absolute time, is what the embedded sqlite backend
// shows (FERRETDB_POSTGRESQL_URL runs it on PostgreSQL).
func BenchmarkPoll(b *testing.B) {
	for _, final := range []int{0, 20000} {
		b.Run(fmt.Sprintf("final=%d", final), func(b *testing.B) {
			var commands atomic.Int64
			mon := &event.CommandMonitor{Started: func(context.Context, *event.CommandStartedEvent) { commands.Add(1) }}
			ctx := context.Background()
			db := monitoredDatabase(b, "_webhook", mon)
			st := store.New(db)
			storeDeliveries(b, st, db.Collection(store.Deliveries), final)
			s := &Sender{Store: st, Lease: time.Minute, PollInterval: time.Second, Workers: 4, Log: testkit.Logger(b)}
			measure := func(name string, poll func() error) {
				b.Run(name, func(b *testing.B) {
					commands.Store(0)
					b.ResetTimer()
					for range b.N {
						if err := poll(); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(commands.Load())/float64(b.N), "cmds/poll")
				})
			}
			measure("schedule", func() error { return s.poll(ctx) })
			measure("deliveries-scan", func() error {
				_, err := mongox.FindAll[store.Delivery](ctx, db.Collection(store.Deliveries),
					bson.D{{Key: "next_attempt_at", Value: bson.D{{Key: "$lte", Value: clock.Now()}}}},
					options.Find().SetSort(bson.D{{Key: "next_attempt_at", Value: 1}}).SetLimit(100))
				return err
			})
		})
	}
}

// monitoredDatabase is a database of its own on the embedded backends, with webhook-svc's
// collections, whose commands mon sees.
func monitoredDatabase(b *testing.B, suffix string, mon *event.CommandMonitor) *mongo.Database {
	b.Helper()
	env := testkit.Backends(b)
	ctx := context.Background()
	client, db, err := mongox.Connect(ctx, env.MongoURI, env.Name+suffix, mon)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Drop(ctx); _ = client.Disconnect(ctx) })
	if err := mongox.EnsureIndexes(ctx, db, store.Indexes); err != nil {
		b.Fatal(err)
	}
	return db
}

// storeDeliveries stores final deliveries shaped like real ones (a message payload, one
// attempt), and five pending ones whose retry is an hour away, each with its entry.
func storeDeliveries(b *testing.B, st *store.Store, coll *mongo.Collection, final int) {
	b.Helper()
	ctx := context.Background()
	now := clock.Now()
	body := `{"type":"message","id":"evt_0","timestamp":"2026-01-01T00:00:00.000Z","data":{"hash":"svc_a","body":"` + strings.Repeat("x", 200) + `"}}`
	batch := make([]any, 0, 1000)
	for i := range final {
		batch = append(batch, store.Delivery{
			ID: fmt.Sprintf("evt_%d.whk_1", i), SubscriptionID: "whk_1", EventID: fmt.Sprintf("evt_%d", i), Event: "message",
			Body: body, CreatedAt: now, Status: store.StatusSucceeded,
			Attempts: []store.Attempt{{At: now, StatusCode: 200, DurationMS: 3}},
		})
		if len(batch) == cap(batch) || i == final-1 {
			if _, err := coll.InsertMany(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	retry := now.Add(time.Hour)
	for i := range 5 {
		id := fmt.Sprintf("evt_pending_%d.whk_1", i)
		if err := st.InsertDue(ctx, store.Due(id, retry)); err != nil {
			b.Fatal(err)
		}
		d := &store.Delivery{ID: id, SubscriptionID: "whk_1", EventID: id, Event: "message", Body: body, CreatedAt: now,
			Status: store.StatusPending, NextAttemptAt: &retry, Attempts: []store.Attempt{{At: now, StatusCode: 503, DurationMS: 3}}}
		if _, err := st.InsertDeliveries(ctx, []*store.Delivery{d}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPollBacklog measures the schedule's poll draining a backlog of first attempts, as an
// outage leaves it (the deliveries the fan-out could not queue on a lane, due at once): 500
// deliveries of 4 subscriptions to a healthy local endpoint. Each iteration stores the backlog
// (not timed), then runs the sender's rounds (flush and poll, as Run does) until every delivery
// was received, and reports the store commands each delivery cost and deliveries per second.
func BenchmarkPollBacklog(b *testing.B) {
	const backlog, subs = 500, 4
	var commands atomic.Int64
	var counting atomic.Bool
	mon := &event.CommandMonitor{Started: func(context.Context, *event.CommandStartedEvent) {
		if counting.Load() {
			commands.Add(1)
		}
	}}
	ctx := context.Background()
	st := store.New(monitoredDatabase(b, "_webhook_backlog", mon))
	var received atomic.Int64
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(rcv.Close)
	now := clock.Now()
	for i := range subs {
		sub := &store.Subscription{ID: fmt.Sprintf("whk_%d", i), Kind: store.KindWebhook, ObjectID: fmt.Sprintf("obj_%d", i),
			CreatorID: fmt.Sprintf("obj_%d", i), CallbackURL: rcv.URL, Events: []string{"message"},
			Secrets: []store.Secret{{Value: NewSecret(), CreatedAt: now}}, CreatedAt: now, UpdatedAt: now}
		if err := st.InsertSubscription(ctx, sub); err != nil {
			b.Fatal(err)
		}
	}
	s := &Sender{Store: st, HTTP: rcv.Client(), Lease: time.Minute, Timeout: 15 * time.Second, DisableAfter: time.Hour,
		Retry: RetryStrategy{Schedule: []time.Duration{5 * time.Second}}, PollInterval: time.Second, Workers: 16, Log: testkit.Logger(b)}
	body := `{"type":"message","id":"evt_0","timestamp":"2026-01-01T00:00:00.000Z","data":{"hash":"svc_a","body":"` + strings.Repeat("x", 200) + `"}}`
	var elapsed time.Duration
	b.ResetTimer()
	for n := range b.N {
		b.StopTimer()
		due := clock.Now()
		ds := make([]*store.Delivery, backlog)
		for i := range ds {
			ev := fmt.Sprintf("evt_%d_%04d", n, i)
			ds[i] = &store.Delivery{ID: ev + fmt.Sprintf(".whk_%d", i%subs), SubscriptionID: fmt.Sprintf("whk_%d", i%subs), EventID: ev,
				Event: "message", Body: body, CreatedAt: due, Status: store.StatusPending, NextAttemptAt: &due, Attempts: []store.Attempt{}}
		}
		if _, err := st.InsertScheduled(ctx, ds); err != nil {
			b.Fatal(err)
		}
		received.Store(0)
		counting.Store(true)
		start := time.Now()
		b.StartTimer()
		for rounds := 0; received.Load() < backlog; rounds++ {
			if rounds > backlog {
				b.Fatalf("%d of %d deliveries received after %d rounds", received.Load(), backlog, rounds)
			}
			s.flush(ctx)
			if err := s.poll(ctx); err != nil {
				b.Fatal(err)
			}
		}
		s.flush(ctx)
		b.StopTimer()
		elapsed += time.Since(start)
		counting.Store(false)
	}
	b.ReportMetric(float64(commands.Load())/float64(b.N*backlog), "cmds/delivery")
	b.ReportMetric(float64(b.N*backlog)/elapsed.Seconds(), "deliveries/s")
}
