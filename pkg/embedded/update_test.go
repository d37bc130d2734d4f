package embedded

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
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
		at16(b, func() error {
			res, err := coll.UpdateOne(context.Background(), bson.D{{Key: "_id", Value: counterID(int(next.Add(1) % docs))}},
				bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}})
			if err == nil && res.ModifiedCount != 1 {
				err = fmt.Errorf("%d documents modified, want 1", res.ModifiedCount)
			}
			return err
		})
	}
	reportRate(b, float64(next.Load()), start, cpu)
}

func counterID(i int) string { return fmt.Sprintf("count|obj_%08d", i) }

// TestUpdateCommandOfManyStatements: one update command of more statements than the store keeps
// connections to a database (a bulk write of 150 updates by `_id`) updates every document, and
// two at once (of different documents: FerretDB's updates read, then rewrite) do too. FerretDB
// kept each statement's query open until the command ended, each holding a pooled connection, so
// such a command waited forever for a connection for its next statement.
func TestUpdateCommandOfManyStatements(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, c := startHandler(t, "sqlite")
	coll := c.Database("bulk").Collection("counters")
	const docs, commands = 150, 2
	seed := make([]any, docs*commands)
	for i := range seed {
		seed[i] = bson.D{{Key: "_id", Value: counterID(i)}, {Key: "n", Value: 0}}
	}
	if _, err := coll.InsertMany(ctx, seed); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for cmd := range commands {
		models := make([]mongo.WriteModel, docs)
		for i := range docs {
			models[i] = mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: counterID(cmd*docs + i)}}).
				SetUpdate(bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}})
		}
		wg.Go(func() {
			res, err := coll.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
			if err != nil {
				t.Errorf("bulk write of %d updates: %v", docs, err)
				return
			}
			if res.ModifiedCount != docs {
				t.Errorf("bulk write modified %d documents, want %d", res.ModifiedCount, docs)
			}
		})
	}
	wg.Wait()
	n, err := coll.CountDocuments(ctx, bson.D{{Key: "n", Value: 1}})
	if err != nil || n != docs*commands {
		t.Errorf("%d documents updated (%v), want %d", n, err, docs*commands)
	}
}
