package main

import (
	"bytes"
	"math"
	"testing"

	"github.com/google/pprof/profile"
)

// TestStoreCPUShare: the share counts the CPU of the samples with a FerretDB frame anywhere in
// their stack, and no other.
func TestStoreCPUShare(t *testing.T) {
	fn := func(id uint64, name string) *profile.Function { return &profile.Function{ID: id, Name: name} }
	ferret := fn(1, "github.com/FerretDB/FerretDB/internal/clientconn.(*conn).run")
	sqlite := fn(2, "modernc.org/sqlite/lib._sqlite3VdbeExec")
	gateway := fn(3, "github.com/svcdev/svc/gateway/internal/proxy.(*Gateway).admit")
	gc := fn(4, "runtime.gcBgMarkWorker")
	loc := func(id uint64, f *profile.Function) *profile.Location {
		return &profile.Location{ID: id, Line: []profile.Line{{Function: f}}}
	}
	inFerret, inSQLite, inGateway, inGC := loc(1, ferret), loc(2, sqlite), loc(3, gateway), loc(4, gc)
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10_000_000,
		Sample: []*profile.Sample{
			{Location: []*profile.Location{inSQLite, inFerret}, Value: []int64{3, 30}}, // SQLite under FerretDB
			{Location: []*profile.Location{inFerret}, Value: []int64{1, 10}},
			{Location: []*profile.Location{inGateway}, Value: []int64{4, 40}},
			{Location: []*profile.Location{inGC}, Value: []int64{2, 20}},
		},
		Location: []*profile.Location{inFerret, inSQLite, inGateway, inGC},
		Function: []*profile.Function{ferret, sqlite, gateway, gc},
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	share, err := storeCPUShare(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(share-0.4) > 1e-9 {
		t.Errorf("share = %v, want 0.4 (40 of 100 ns in FerretDB's stacks)", share)
	}
	if _, err := storeCPUShare([]byte("not a profile")); err == nil {
		t.Error("a malformed profile gave no error")
	}
}
