package embedded

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// postingLike returns a document shaped like a memory posting of graph-svc (about 500 bytes of
// BSON, a string `_id` of the form "p|<object>|<stem>|<time>|<node>"): the rows a send writes
// most of.
func postingLike(n int64) bson.D {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(n) * time.Millisecond)
	node := fmt.Sprintf("nd_%020d", n)
	return bson.D{
		{Key: "_id", Value: fmt.Sprintf("p|obj_%08d|stem%03d|%s|%s", n%50, n%997, created.Format("20060102T150405.000000000Z"), node)},
		{Key: "n", Value: node},
		{Key: "t", Value: fmt.Sprintf("th_%016d", n%1000)},
		{Key: "ty", Value: "message"},
		{Key: "a", Value: "usr_0000000000000042"},
		{Key: "c", Value: created},
		{Key: "m", Value: fmt.Sprintf("msg_%016d", n)},
		{Key: "ti", Value: "A short title of the thread"},
		{Key: "x", Value: strings.Repeat("an excerpt of the message body, cut at its start ", 5)[:240]},
		{Key: "dl", Value: 87},
		{Key: "f", Value: 3},
		{Key: "nd", Value: int64(1234)},
		{Key: "fi", Value: created},
	}
}

// BenchmarkInsertPostings prints how many posting-like documents per second the embedded SQLite
// store takes: as unordered insertMany of 100 and of 1,000 documents, and as insertOne from 16
// goroutines (every insert its own command), and the CPU time of the whole process (driver,
// FerretDB and SQLite) per document, which other work on the machine does not move as it moves
// docs/s. Its CPU profile (-cpuprofile) shows where a row's time goes.
func BenchmarkInsertPostings(b *testing.B) {
	if n := len(postingBSON(b)); n < 400 || n > 600 {
		b.Fatalf("a posting-like document is %d bytes of BSON, want about 500", n)
	}
	for _, batch := range []int{100, 1_000} {
		b.Run(fmt.Sprintf("insertMany=%d", batch), func(b *testing.B) {
			coll := postingsCollection(b)
			var next int64
			start, cpu := time.Now(), processCPU(b)
			for b.Loop() {
				docs := make([]any, batch)
				for i := range docs {
					docs[i] = postingLike(next)
					next++
				}
				if _, err := coll.InsertMany(context.Background(), docs, options.InsertMany().SetOrdered(false)); err != nil {
					b.Fatal(err)
				}
			}
			reportRate(b, float64(next), start, cpu)
		})
	}
	b.Run("insertOne/goroutines=16", func(b *testing.B) {
		coll := postingsCollection(b)
		var next atomic.Int64
		start, cpu := time.Now(), processCPU(b)
		for b.Loop() {
			at16(b, func() error {
				_, err := coll.InsertOne(context.Background(), postingLike(next.Add(1)))
				return err
			})
		}
		reportRate(b, float64(next.Load()), start, cpu)
	})
}

// at16 runs op from 16 goroutines at once and fails b on any error.
func at16(b *testing.B, op func() error) {
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			if err := op(); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// postingsCollection starts a SQLite store with a posting collection that has its `_id` indexes,
// as the all-in-one's have after start-up.
func postingsCollection(b *testing.B) *mongo.Collection {
	b.Helper()
	m, c := startHandler(b, "sqlite")
	coll := c.Database("bench").Collection("memory_postings")
	if _, err := coll.InsertOne(context.Background(), bson.D{{Key: "_id", Value: "a"}}); err != nil {
		b.Fatal(err)
	}
	if err := m.SyncIndexes(context.Background()); err != nil {
		b.Fatal(err)
	}
	return coll
}

func postingBSON(b *testing.B) []byte {
	raw, err := bson.Marshal(postingLike(1))
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// reportRate reports docs documents written since start as docs/s, and the process's CPU time
// since cpu per document.
func reportRate(b *testing.B, docs float64, start time.Time, cpu time.Duration) {
	b.ReportMetric(docs/time.Since(start).Seconds(), "docs/s")
	b.ReportMetric(float64((processCPU(b)-cpu).Microseconds())/docs, "cpu-µs/doc")
}

// processCPU is the user and system CPU time the process has used.
func processCPU(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
