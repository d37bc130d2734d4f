package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/testkit"
)

// BenchmarkOutbox writes b.N documents from 16 writers, each staging its event, inserting the
// document and confirming, as the services do, and reports the lag from confirmation to the
// event's arrival at a Kafka consumer (p50, p99), and how long the relay needed after the last
// write to publish everything.
func BenchmarkOutbox(b *testing.B) {
	env := testkit.Backends(b)
	db := testkit.Database(b, env, "bench")
	prod := events.NewProducer(env.Brokers, env.Name+".")
	defer prod.Close()
	outbox := events.NewOutbox(db, prod, testkit.Logger(b), events.OutboxOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	relayDone := make(chan struct{})
	go func() { defer close(relayDone); _ = outbox.Run(ctx) }()
	defer func() { cancel(); <-relayDone }()

	var mu sync.Mutex
	confirmed := map[string]time.Time{}
	var lags []time.Duration
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: env.Brokers, GroupID: env.Name + ".bench",
		GroupTopics: []string{env.Name + "." + events.TopicIdentity}, StartOffset: kafka.FirstOffset, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	go func() {
		for {
			msg, err := r.ReadMessage(ctx)
			if err != nil {
				return
			}
			var ev events.Event
			_ = json.Unmarshal(msg.Value, &ev)
			mu.Lock()
			if at, ok := confirmed[ev.ID]; ok {
				lags = append(lags, time.Since(at))
			}
			mu.Unlock()
		}
	}()

	warm := events.MustNew(events.TopicIdentity, events.ObjectCreated, "warm", "svc_warm", "req", map[string]string{})
	if err := prod.Publish(ctx, warm); err != nil { // creates the topic before the clock runs
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < b.N; i += 16 {
				id := fmt.Sprintf("doc%d", i)
				ev := events.MustNew(events.TopicIdentity, events.ObjectCreated, id, "svc_"+id, "req", map[string]string{"doc": id})
				if err := outbox.Stage(ctx, "things", id, ev); err != nil {
					b.Error(err)
					return
				}
				if _, err := db.Collection("things").InsertOne(ctx, bson.M{"_id": id, events.EventsField: events.IDs(ev)}); err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				confirmed[ev.ID] = time.Now()
				mu.Unlock()
				outbox.Confirm(ev)
			}
		}()
	}
	wg.Wait()
	writing := time.Since(start)
	deadline := time.Now().Add(time.Minute)
	for {
		mu.Lock()
		n := len(lags)
		mu.Unlock()
		if n >= b.N || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	drained := time.Since(start) - writing
	b.StopTimer()
	mu.Lock()
	defer mu.Unlock()
	if len(lags) < b.N {
		b.Fatalf("%d of %d events reached Kafka", len(lags), b.N)
	}
	slices.Sort(lags)
	b.ReportMetric(float64(b.N)/writing.Seconds(), "writes/s")
	b.ReportMetric(float64(lags[len(lags)/2].Microseconds())/1000, "ms-lag-p50")
	b.ReportMetric(float64(lags[len(lags)*99/100].Microseconds())/1000, "ms-lag-p99")
	b.ReportMetric(float64(drained.Microseconds())/1000, "ms-drain")
}

// BenchmarkConsume publishes b.N events over the topic's partitions and reports how many a
// consumer group handles per second, with a handler that does nothing: the cost of the dedupe
// reads, the processed records and the offset commits.
func BenchmarkConsume(b *testing.B) {
	var done atomic.Int64
	f := newConsumerFixture(b, func(context.Context, events.Event) error { done.Add(1); return nil })
	evs := make([]events.Pending, b.N)
	for i := range evs {
		evs[i] = events.MustNew(events.TopicClaims, events.ClaimVerified, fmt.Sprintf("obj_%d", i%64), "svc_x", "req_bench", map[string]int{"i": i})
	}
	for batch := range slices.Chunk(evs, 500) {
		if err := f.prod.Publish(context.Background(), batch...); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	start := time.Now()
	f.start(b)
	for done.Load() < int64(b.N) {
		time.Sleep(5 * time.Millisecond)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "events/s")
}
