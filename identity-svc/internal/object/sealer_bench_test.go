package object

import (
	"context"
	"testing"
	"time"
)

// BenchmarkResealAll reseals every key of a store of 300 objects (one svc-held key each) on the
// embedded FerretDB, alternately under two secrets so that every run moves every key, and
// reports the keys resealed per second.
func BenchmarkResealAll(b *testing.B) {
	s, _ := newService(b)
	ctx := context.Background()
	const objects = 300
	for range objects {
		if _, err := s.Create(ctx, "req_bench", NewObject{}); err != nil {
			b.Fatal(err)
		}
	}
	sealers := []*Sealer{sealerOf(b, secretB, secretA), sealerOf(b, secretA, secretB)}
	b.ResetTimer()
	keys := 0
	for i := 0; i < b.N; i++ {
		stats, err := sealers[i%2].ResealAll(ctx, raw(s), 200, nil)
		if err != nil || stats.Resealed != objects {
			b.Fatalf("%+v %v", stats, err)
		}
		keys += stats.Resealed
	}
	b.ReportMetric(float64(keys)/b.Elapsed().Seconds(), "keys/s")
	// A run with nothing left to reseal reads every key and writes none.
	b.StopTimer()
	start := time.Now()
	stats, err := sealers[(b.N-1)%2].ResealAll(ctx, raw(s), 200, nil)
	if err != nil || stats.Resealed != 0 || stats.Keys != objects {
		b.Fatalf("%+v %v", stats, err)
	}
	b.ReportMetric(float64(objects)/time.Since(start).Seconds(), "keys-read/s")
}
