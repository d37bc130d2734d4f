package mongox_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// TestLeases: of replicas asking for one lease at once, exactly one gets it; it can be taken
// again once swept after expiry.
func TestLeases(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	coll := testkit.Database(t, testkit.Backends(t), "mongox").Collection("leases")
	leases := mongox.NewLeases(coll)
	now := time.Now().UTC().Truncate(time.Millisecond)
	var won atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			ok, err := leases.Take(ctx, "src_1/period", now.Add(time.Minute))
			if err != nil {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 {
		t.Fatalf("%d replicas took the lease, want 1", won.Load())
	}
	if err := leases.Sweep(ctx, now); err != nil {
		t.Fatal(err)
	}
	if ok, _ := leases.Take(ctx, "src_1/period", now); ok {
		t.Error("a lease that has not expired was swept")
	}
	if err := leases.Sweep(ctx, now.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if ok, err := leases.Take(ctx, "src_1/period", now); !ok || err != nil {
		t.Errorf("an expired, swept lease cannot be taken again: %v %v", ok, err)
	}
	type doc struct {
		ID string `bson:"_id"`
	}
	all, err := mongox.FindAll[doc](ctx, coll, bson.D{})
	if err != nil || len(all) != 1 || all[0].ID != "src_1/period" {
		t.Errorf("FindAll = %v, %v", all, err)
	}
	none, err := mongox.FindAll[doc](ctx, coll, bson.D{{Key: "_id", Value: "nothing"}})
	if err != nil || none == nil || len(none) != 0 {
		t.Errorf("FindAll of nothing = %#v, %v; want an empty slice", none, err)
	}
}

// TestInsertNew: of a batch, the documents whose _id is new get in and are reported; the ones
// already there are left as they were.
func TestInsertNew(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	coll := testkit.Database(t, testkit.Backends(t), "mongox").Collection("docs")
	doc := func(id, v string) bson.D { return bson.D{{Key: "_id", Value: id}, {Key: "v", Value: v}} }
	if got, err := mongox.InsertNew(ctx, coll, []bson.D{doc("a", "first"), doc("b", "first")}); err != nil || !slices.Equal(got, []bool{true, true}) {
		t.Fatalf("first batch: %v, %v", got, err)
	}
	got, err := mongox.InsertNew(ctx, coll, []bson.D{doc("a", "second"), doc("c", "second"), doc("b", "second"), doc("d", "second")})
	if err != nil || !slices.Equal(got, []bool{false, true, false, true}) {
		t.Fatalf("second batch: %v, %v; want only c and d new", got, err)
	}
	var a struct{ V string }
	if err := mongox.FindOne(ctx, coll, mongox.ByID("a"), &a); err != nil || a.V != "first" {
		t.Errorf("a = %+v (%v), want it left as first written", a, err)
	}
	if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n != 4 {
		t.Errorf("%d documents (%v), want 4", n, err)
	}
	if got, err := mongox.InsertNew(ctx, coll, []bson.D{}); err != nil || len(got) != 0 {
		t.Errorf("empty batch: %v, %v", got, err)
	}
}

// TestInsertNewInBatches: documents of several batches report, in their order, which got in,
// whichever batch held the ones that existed.
func TestInsertNewInBatches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	coll := testkit.Database(t, testkit.Backends(t), "mongox").Collection("batches")
	doc := func(i int) bson.D { return bson.D{{Key: "_id", Value: fmt.Sprintf("d%02d", i)}} }
	var docs []bson.D
	want := make([]bool, 25)
	for i := range 25 {
		docs = append(docs, doc(i))
		want[i] = i != 3 && i != 12 && i != 24 // stored before, in each of the three batches
	}
	if _, err := mongox.InsertNew(ctx, coll, []bson.D{doc(3), doc(12), doc(24)}); err != nil {
		t.Fatal(err)
	}
	got, err := mongox.InsertNewInBatches(ctx, coll, docs, 10)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("got %v, %v; want %v", got, err, want)
	}
	if n, err := coll.CountDocuments(ctx, bson.D{}); err != nil || n != 25 {
		t.Errorf("%d documents (%v), want 25", n, err)
	}
}

// TestUpsertsOfOneNewDocumentAtOnce: concurrent upserts, replaces and bulk replaces of one _id
// that does not exist yet all succeed (the losers of the insert race update what the winner
// created), and the document then takes a later upsert.
func TestUpsertsOfOneNewDocumentAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	coll := testkit.Database(t, testkit.Backends(t), "mongox").Collection("upserts")
	for round := range 8 {
		id := "doc" + strconv.Itoa(round)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				<-start
				var err error
				switch i % 3 {
				case 0:
					err = mongox.Upsert(ctx, coll, id, bson.D{{Key: "$max", Value: bson.D{{Key: "n", Value: i}}}})
				case 1:
					err = mongox.ReplaceUpsert(ctx, coll, id, bson.D{{Key: "_id", Value: id}, {Key: "n", Value: -1}})
				default:
					err = mongox.BulkUpsert(ctx, coll, []mongo.WriteModel{mongo.NewReplaceOneModel().SetFilter(mongox.ByID(id)).
						SetReplacement(bson.D{{Key: "_id", Value: id}, {Key: "n", Value: -2}}).SetUpsert(true)})
				}
				if err != nil {
					t.Errorf("round %d, writer %d: %v", round, i, err)
				}
			})
		}
		close(start)
		wg.Wait()
		if err := mongox.Upsert(ctx, coll, id, bson.D{{Key: "$max", Value: bson.D{{Key: "n", Value: 99}}}}); err != nil {
			t.Fatal(err)
		}
		var got struct{ N int }
		if err := mongox.FindOne(ctx, coll, mongox.ByID(id), &got); err != nil || got.N != 99 {
			t.Fatalf("round %d: %+v, %v", round, got, err)
		}
	}
}
