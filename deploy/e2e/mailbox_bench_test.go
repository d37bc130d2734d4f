package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

// benchWorkers is the number of concurrent clients of both measurements.
const benchWorkers = 16

// BenchmarkSendMessage measures public sends to one thread through the gateway (rate limit,
// hash resolution, block check, thread check, message insert, thread update, outbox relay), and
// then, in the same run and with as many concurrent writers, the raw insert rate of the database
// mailbox-svc writes to. It reports both as sends/s and inserts/s; the ratio is the cost of the
// whole send path over the store's own ceiling. On the embedded FerretDB a fixed count keeps it
// short:
//
//	go test ./deploy/e2e -run '^$' -bench SendMessage -benchtime 400x
func BenchmarkSendMessage(b *testing.B) {
	env := Start(b)
	alice, _ := env.CreateObject(b, nil)
	bob, _ := env.CreateObject(b, nil)
	threadID := Str(b, sendMessage(b, env, alice, bob, "", "start"), "thread_id")
	body := strings.Repeat("lorem ipsum ", 40) // ~0.5 KiB, a typical agent note
	req, _ := json.Marshal(map[string]any{"from_hash": alice, "to_hash": bob, "kind": "note", "body": body, "thread_id": threadID})
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: benchWorkers}}

	b.ResetTimer()
	sends, err := concurrently(b.N, func(int) error {
		resp, err := client.Post(env.URL+"/api/messages", "application/json", bytes.NewReader(req))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusCreated {
			b.Errorf("send answered %d", resp.StatusCode)
		}
		return nil
	})
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}

	// The same database, a collection of its own, documents shaped as messages.
	be := testkit.Backends(b)
	mc, db, err := mongox.Connect(context.Background(), be.MongoURI, env.Name+"_mailbox_svc")
	if err != nil {
		b.Fatal(err)
	}
	defer mc.Disconnect(context.Background())
	coll := db.Collection("bench_raw_inserts")
	inserts, err := concurrently(b.N, func(int) error {
		_, err := coll.InsertOne(context.Background(), bson.D{
			{Key: "_id", Value: apikey.NewID("msg")}, {Key: "thread_id", Value: threadID}, {Key: "from_id", Value: "obj_a"},
			{Key: "to_id", Value: "obj_b"}, {Key: "kind", Value: "note"}, {Key: "body", Value: body}, {Key: "created_at", Value: time.Now()},
		})
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(sends, "sends/s")
	b.ReportMetric(inserts, "inserts/s")
}

// concurrently runs op n times on benchWorkers goroutines and returns the rate in operations per
// second, or the first error.
func concurrently(n int, op func(i int) error) (float64, error) {
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for range benchWorkers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := op(i); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		return 0, err
	}
	return float64(n) / elapsed.Seconds(), nil
}
