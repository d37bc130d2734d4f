package mongox_test

import (
	"context"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

// TestEnsureIndexes: a declaration of `_id` alone makes the collection and no index of its own,
// a retired entry makes the collection and drops its index, and the indexes that earlier
// releases made for both ("_id_1", and the retired one) are dropped from a store that has them,
// while a real index is made and kept, and documents stay.
func TestEnsureIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testkit.Database(t, testkit.Backends(t), "indexes")
	// What earlier releases made for the declarations below.
	for coll, keys := range map[string]bson.D{"declared": {{Key: "_id", Value: 1}}, "retiring": {{Key: "at", Value: 1}}} {
		if _, err := db.Collection(coll).Indexes().CreateOne(ctx, mongo.IndexModel{Keys: keys}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Collection(coll).InsertOne(ctx, bson.D{{Key: "_id", Value: "a"}, {Key: "at", Value: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	declared := []mongox.Index{
		{Collection: "declared", Keys: bson.D{{Key: "_id", Value: 1}}},
		{Collection: "retiring", Keys: bson.D{{Key: "at", Value: 1}}, Retired: true},
		{Collection: "fresh", Keys: bson.D{{Key: "_id", Value: 1}}},
		{Collection: "fresh_retired", Keys: bson.D{{Key: "at", Value: 1}}, Retired: true},
		{Collection: "indexed", Keys: bson.D{{Key: "key", Value: 1}}, Unique: true},
	}
	for range 2 { // and again, as at every start
		if err := mongox.EnsureIndexes(ctx, db, declared); err != nil {
			t.Fatal(err)
		}
	}
	names, err := db.ListCollectionNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []struct {
		coll    string
		indexes []string
	}{
		{"declared", []string{"_id_"}},
		{"retiring", []string{"_id_"}},
		{"fresh", []string{"_id_"}},
		{"fresh_retired", []string{"_id_"}},
		{"indexed", []string{"_id_", "key_1"}},
	} {
		if !slices.Contains(names, want.coll) {
			t.Errorf("collection %s was not made (collections %v)", want.coll, names)
			continue
		}
		specs, err := db.Collection(want.coll).Indexes().ListSpecifications(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range specs {
			got = append(got, s.Name)
		}
		slices.Sort(got)
		if !slices.Equal(got, want.indexes) {
			t.Errorf("indexes of %s: %v, want %v", want.coll, got, want.indexes)
		}
	}
	for _, coll := range []string{"declared", "retiring"} {
		if n, err := db.Collection(coll).CountDocuments(mongox.Unbounded(ctx, "a test's check"), bson.D{}); err != nil || n != 1 {
			t.Errorf("%s holds %d documents (%v), want its one", coll, n, err)
		}
	}
}
