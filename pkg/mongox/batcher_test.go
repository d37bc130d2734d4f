package mongox_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

// TestBatcher: many concurrent writers, some of them writing documents that exist and one writing
// more than a batch holds, each learn exactly which of their own documents got in, and every new
// document is stored once.
func TestBatcher(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	coll := testkit.Database(t, testkit.Backends(t), "mongox").Collection("batched")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "w07-0"}, {Key: "v", Value: "before"}}); err != nil {
		t.Fatal(err)
	}
	b := mongox.NewBatcher(coll, 8, 10*time.Second)
	const writers = 40
	got := make([][]bool, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			n := 1 + w%3
			if w == 13 {
				n = 20 // more than a batch holds: it goes alone
			}
			var docs []any
			for i := range n {
				docs = append(docs, bson.D{{Key: "_id", Value: fmt.Sprintf("w%02d-%d", w, i)}, {Key: "v", Value: "batched"}})
			}
			if w%10 == 5 {
				docs = append(docs, docs[0]) // the same document twice in one write
			}
			inserted, err := b.InsertNew(ctx, docs...)
			if err != nil {
				t.Errorf("writer %d: %v", w, err)
			}
			got[w] = inserted
		})
	}
	wg.Wait()
	total := 0
	for w, inserted := range got {
		n := 1 + w%3
		if w == 13 {
			n = 20
		}
		want := slices.Repeat([]bool{true}, n)
		if w == 7 {
			want[0] = false // stored before
		}
		if w%10 == 5 {
			want = append(want, false)
		}
		if !slices.Equal(inserted, want) {
			t.Errorf("writer %d: inserted %v, want %v", w, inserted, want)
		}
		for _, ok := range want {
			if ok {
				total++
			}
		}
	}
	if n, err := coll.CountDocuments(ctx, bson.D{{Key: "v", Value: "batched"}}); err != nil || int(n) != total {
		t.Errorf("%d batched documents stored (%v), want %d", n, err, total)
	}
	var before struct{ V string }
	if err := mongox.FindOne(ctx, coll, mongox.ByID("w07-0"), &before); err != nil || before.V != "before" {
		t.Errorf("the document stored before is %+v (%v), want it unchanged", before, err)
	}

	// A writer whose context ends stops waiting; its documents still go in with their batch.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := b.InsertNew(cctx, bson.D{{Key: "_id", Value: "late"}}); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled writer got %v, want context.Canceled", err)
	}
}
