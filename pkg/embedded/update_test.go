package embedded

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// BenchmarkUpdateByID prints how many updates by `_id` a second the embedded SQLite store takes
// and the process's CPU time per update: an `$inc` of a counter, as the services move their
// counter documents, from 16 goroutines over 1,000 documents.
func BenchmarkUpdateByID(b *testing.B) {
	const docs = 1_000
	coll := postingsCollection(b)
	seed := make([]any, docs)
	for i := range seed {
		seed[i] = bson.D{{Key: "_id", Value: counterID(i)}, {Key: "n", Value: 0}}
	}
	if _, err := coll.InsertMany(context.Background(), seed); err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	start, cpu := time.Now(), processCPU(b)
	for b.Loop() {
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for range 16 {
			wg.Go(func() {
				res, err := coll.UpdateOne(context.Background(), bson.D{{Key: "_id", Value: counterID(int(next.Add(1) % docs))}},
					bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}})
				if err == nil && res.ModifiedCount != 1 {
					err = fmt.Errorf("%d documents modified, want 1", res.ModifiedCount)
				}
				if err != nil {
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
	reportRate(b, float64(next.Load()), start, cpu)
}

func counterID(i int) string { return fmt.Sprintf("count|obj_%08d", i) }
