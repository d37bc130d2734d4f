package store

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

// TestRetiredIndexesAreDroppedAndKeyIDsStayUnique writes a store with the indexes an earlier
// release made (a unique one, compound ones, two of one collection) and starts on it: each
// collection keeps its _id index only, and a key id that is taken is still refused, by its
// record in KeyIDs, where the unique index on key_id used to refuse it.
func TestRetiredIndexesAreDroppedAndKeyIDsStayUnique(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testkit.Database(t, testkit.Backends(t), "indexes")
	for _, ix := range Indexes {
		if !ix.Retired {
			continue
		}
		opts := options.Index()
		if ix.Unique {
			opts.SetUnique(true)
		}
		if _, err := db.Collection(ix.Collection).Indexes().CreateOne(ctx, mongo.IndexModel{Keys: ix.Keys, Options: opts}); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 { // and at the next start
		if err := mongox.EnsureIndexes(ctx, db, Indexes); err != nil {
			t.Fatal(err)
		}
	}
	for _, ix := range Indexes {
		specs, err := db.Collection(ix.Collection).Indexes().ListSpecifications(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range specs {
			names = append(names, s.Name)
		}
		if !slices.Equal(names, []string{"_id_"}) {
			t.Errorf("indexes of %s: %v, want _id_ alone", ix.Collection, names)
		}
	}

	s := New(db)
	_, digest := apikey.Generate(apikey.OwnerPrefix)
	first := &Key{Digest: digest, KeyID: apikey.NewID("key"), ObjectID: "obj_a", Owner: true, CreatedAt: time.Now()}
	if err := s.InsertKey(ctx, first); err != nil {
		t.Fatal(err)
	}
	_, other := apikey.Generate(apikey.OwnerPrefix)
	again := &Key{Digest: other, KeyID: first.KeyID, ObjectID: "obj_b", Owner: true, CreatedAt: time.Now()}
	if err := s.InsertKey(ctx, again); !errors.Is(err, ErrTaken) {
		t.Fatalf("a key with a taken key id: %v, want ErrTaken", err)
	}
	if err := mongox.FindOne(ctx, db.Collection(Keys), bson.D{{Key: "_id", Value: other}}, &Key{}); !errors.Is(err, mongox.ErrNotFound) {
		t.Fatalf("the refused key is stored: %v", err)
	}
}
