package mongox_test

import (
	"context"
	"testing"

	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

// TestPageWhereBatchBoundsItsReads: the same pages, positions and budget as PageWhere, with keep
// judging whole batches.
func TestPageWhereBatchBoundsItsReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	log := mongox.NewLog(testkit.Database(t, testkit.Backends(t), "mongox").Collection("log"))
	for i := 1; i <= 40; i++ {
		if _, err := mongox.Append(ctx, log, "l", i); err != nil {
			t.Fatal(err)
		}
	}
	judged := 0
	judge := func(ok func(int) bool) func(context.Context, []mongox.Entry[int]) ([]bool, error) {
		return func(_ context.Context, es []mongox.Entry[int]) ([]bool, error) {
			judged += len(es)
			out := make([]bool, len(es))
			for i, e := range es {
				out[i] = ok(e.Value)
			}
			return out, nil
		}
	}
	even := judge(func(v int) bool { return v%2 == 0 })
	page, next, err := mongox.PageWhereBatch(ctx, log, "l", 0, 3, 100, even)
	if err != nil || len(page) != 3 || page[0].Value != 40 || page[2].Value != 36 || next != 36 {
		t.Fatalf("first page %+v next %d: %v", page, next, err)
	}
	page, _, err = mongox.PageWhereBatch(ctx, log, "l", next, 2, 100, even)
	if err != nil || len(page) != 2 || page[0].Value != 34 || page[1].Value != 32 {
		t.Fatalf("second page %+v: %v", page, err)
	}
	judged = 0
	page, next, err = mongox.PageWhereBatch(ctx, log, "l", 0, 5, 12, judge(func(int) bool { return false }))
	if err != nil || len(page) != 0 || next != 29 || judged != 12 {
		t.Fatalf("refused page %+v next %d judged %d: %v", page, next, judged, err)
	}
	page, next, err = mongox.PageWhereBatch(ctx, log, "l", 5, 10, 100, even)
	if err != nil || len(page) != 2 || page[0].Value != 4 || next != 0 {
		t.Fatalf("last page %+v next %d: %v", page, next, err)
	}
}
