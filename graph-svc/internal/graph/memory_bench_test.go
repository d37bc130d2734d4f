package graph_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/event"

	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
)

// BenchmarkMemorySearch prints the p50 of a memory search with ten hits when alice's index holds
// 1,000 and 100,000 nodes, on the embedded store (SQLite), or on FerretDB-postgresql when
// FERRETDB_POSTGRESQL_URL is set. Run with -run X -bench MemorySearch.
//
//   - spread: the ten hits are decisions recorded through the service, spread evenly over the
//     index, and no other node holds the term: the term's range holds ten postings.
//   - clustered: ten filler nodes in the middle of the index, 4 apart, hold the term (one
//     conversation about one topic).
//   - common: terms every filler node holds, limit 10: each term's range is read up to its
//     limit, newest first.
//
// The filler nodes are written with store.IndexMemory in batches (the index's own writes):
// recording 100,000 nodes one at a time would take the benchmark most of an hour and measure
// the writes, not the search.
//
// Each iteration searches both indexes, one after the other, so that the two p50s are taken
// under the same load (a shared machine's load moves more than the search does); the finds a
// search sends are printed beside them, and do not depend on the machine.
func BenchmarkMemorySearch(b *testing.B) {
	sizes := []int{1000, 100000}
	services := make([]*graph.Service, len(sizes))
	reads := make([]*atomic.Int64, len(sizes))
	for i, size := range sizes {
		services[i], reads[i] = memoryBenchService(b, size)
	}
	for _, q := range []struct {
		name string
		q    graph.MemoryQuery
	}{
		{"spread", graph.MemoryQuery{Q: "zeppelin", Limit: 10}},
		{"clustered", graph.MemoryQuery{Q: "kestrel", Limit: 10}},
		{"common", graph.MemoryQuery{Q: "status report", Limit: 10}},
	} {
		b.Run(q.name, func(b *testing.B) {
			ctx := context.Background()
			took := make([][]time.Duration, len(sizes))
			for _, r := range reads {
				r.Store(0)
			}
			for b.Loop() {
				for i, s := range services {
					start := time.Now()
					r, err := s.SearchMemory(ctx, alice, q.q)
					took[i] = append(took[i], time.Since(start))
					if err != nil {
						b.Fatal(err)
					}
					if len(r.Hits) != 10 {
						b.Fatalf("%d hits at %d nodes, want 10", len(r.Hits), sizes[i])
					}
				}
			}
			p50 := make([]time.Duration, len(sizes))
			for i, size := range sizes {
				slices.Sort(took[i])
				p50[i] = took[i][len(took[i])/2]
				perSearch := float64(reads[i].Load()) / float64(len(took[i]))
				b.ReportMetric(float64(p50[i].Microseconds())/1000, fmt.Sprintf("p50-ms@%d", size))
				fmt.Printf("memory search %-9s %-15q %6d indexed nodes, 10 hits: p50 %s, %.0f finds a search (%d searches)\n",
					q.name, q.q.Q, size, p50[i].Round(time.Microsecond), perSearch, len(took[i]))
			}
			ratio := float64(p50[1]) / float64(p50[0])
			b.ReportMetric(ratio, "p50-ratio")
			fmt.Printf("memory search %-9s p50 at %d nodes / p50 at %d: %.2f\n", q.name, sizes[1], sizes[0], ratio)
		})
	}
}

// memoryBenchService returns a service whose index of alice holds size nodes: size-10 filler
// nodes and ten decisions, at positions size/10, 2·size/10, …, size.
func memoryBenchService(b *testing.B, size int) (*graph.Service, *atomic.Int64) {
	b.Helper()
	var reads atomic.Int64
	s := monitoredService(b, strconv.Itoa(size), func(_ context.Context, e *event.CommandStartedEvent) {
		if e.CommandName == "find" {
			reads.Add(1)
		}
	})
	ctx := context.Background()
	var seq int64
	base := clock.Now().Add(-time.Duration(size) * time.Second)
	fill := func(n int) {
		entries := make([]store.MemoryEntry, 0, n)
		var indexed [][]string
		for range n {
			seq++
			stems := []string{"w" + strconv.FormatInt(seq%500, 10), "v" + strconv.FormatInt(seq%301, 10), "status"}
			if c := seq - int64(size/2+8); c >= 0 && c < 40 && c%4 == 0 {
				stems = append(stems, "kestrel")
			}
			entries = append(entries, store.MemoryEntry{NodeID: "nod_fill" + strconv.FormatInt(seq, 10), ThreadID: "thr_ab",
				Type: "evidence", PeerID: "obj_b", AuthorID: "obj_b", CreatedAt: base.Add(time.Duration(seq) * time.Second),
				Excerpt: "status " + stems[0] + " " + stems[1], Len: len(stems), Stems: stems, Counts: []int{1, 1, 1, 1}[:len(stems)]})
			indexed = append(indexed, stems)
		}
		for start := 0; start < len(entries); start += 300 {
			end := min(start+300, len(entries))
			if err := s.Store.IndexMemory(ctx, "obj_a", entries[start:end], indexed[start:end]); err != nil {
				b.Fatal(err)
			}
		}
	}
	for i := range 10 {
		fill(size/10 - 1)
		if _, err := s.Decide(ctx, "req", alice, "thr_ab", graph.DecisionDraft{Title: fmt.Sprintf("Zeppelin %d", i),
			Body: "The zeppelin flies then."}); err != nil {
			b.Fatal(err)
		}
		seq++
	}
	if st, err := s.Store.(*store.Store).MemoryStatsOf(ctx, "obj_a"); err != nil || st.Nodes != int64(size) {
		b.Fatalf("alice's index holds %d nodes (%v), want %d", st.Nodes, err, size)
	}
	return s, &reads
}
