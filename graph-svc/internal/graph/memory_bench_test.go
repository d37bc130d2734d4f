package graph_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
)

// BenchmarkMemorySearch prints the p50 of a memory search with ten hits when alice's index holds
// 1,000 and 100,000 nodes (on the embedded store). Run with -bench MemorySearch; it is not part
// of a plain go test.
//
// The filler nodes are written straight into the index lists in mongox.Log's documented layout
// (entry n of list L is "L#<n>", its length hint "L#head"), in batches: indexing 100,000 nodes one
// append at a time would take the benchmark most of an hour and measure the writes, not the
// search. The ten hits are indexed through the service, as a recorded decision is.
func BenchmarkMemorySearch(b *testing.B) {
	for _, size := range []int{1000, 100000} {
		b.Run(strconv.Itoa(size), func(b *testing.B) {
			s := benchService(b, size)
			ctx := context.Background()
			q := graph.MemoryQuery{Q: "ship release", PeerHash: "svc_b", Limit: 10}
			var took []time.Duration
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				r, err := s.SearchMemory(ctx, alice, q)
				took = append(took, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				if len(r.Hits) != 10 {
					b.Fatalf("%d hits, want 10", len(r.Hits))
				}
			}
			slices.Sort(took)
			p50 := took[len(took)/2]
			b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
			fmt.Printf("memory search, %d indexed nodes, 10 hits: p50 %s over %d searches\n", size, p50, len(took))
		})
	}
}

func benchService(b *testing.B, size int) *graph.Service {
	b.Helper()
	s, _ := newService(b)
	ctx := context.Background()
	log := s.Store
	// Filler: size-10 nodes, each with two terms of its own vocabulary (a term shared by at most
	// 50 nodes), counted in memdocs.
	fill := size - 10
	var docs []any
	heads := map[string]int64{}
	flush := func() {
		if len(docs) == 0 {
			return
		}
		if _, err := log.GraphLogCollection().InsertMany(ctx, docs); err != nil {
			b.Fatal(err)
		}
		docs = docs[:0]
	}
	add := func(list string, v any) {
		heads[list]++
		docs = append(docs, bson.D{{Key: "_id", Value: list + "#" + strconv.FormatInt(heads[list], 10)},
			{Key: "seq", Value: heads[list]}, {Key: "at", Value: clock.Now()}, {Key: "v", Value: v}})
		if len(docs) == 1000 {
			flush()
		}
	}
	now := clock.Now()
	var total int64
	for i := range fill {
		id := fmt.Sprintf("nod_fill%d", i)
		p := store.Posting{NodeID: id, ThreadID: "thr_ab", Type: "evidence", PeerID: "obj_b", AuthorID: "obj_a", TF: 1, Len: 2,
			CreatedAt: now}
		add("mem:obj_a/w"+strconv.Itoa(i%(fill/50+1)), p)
		add("mem:obj_a/v"+strconv.Itoa(i%(fill/50+1)), p)
		total += 2
		add("memdocs:obj_a", store.MemoryDoc{NodeID: id, Len: 2, TotalLen: total})
	}
	flush()
	for list, n := range heads {
		docs = append(docs, bson.D{{Key: "_id", Value: list + "#head"}, {Key: "seq", Value: n}})
		if len(docs) == 1000 {
			flush()
		}
	}
	flush()
	for i := range 10 {
		if _, err := s.Decide(ctx, "req", alice, "thr_ab", graph.DecisionDraft{Title: fmt.Sprintf("Ship %d", i),
			Body: "We ship the release then."}); err != nil {
			b.Fatal(err)
		}
	}
	if n, _, err := s.Store.MemoryStats(ctx, "obj_a"); err != nil || n != int64(size) {
		b.Fatalf("alice's index holds %d nodes (%v), want %d", n, err, size)
	}
	return s
}
