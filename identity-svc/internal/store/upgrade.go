package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/mongox"
)

// rangesMigration names the marker of Upgrade in the migrations collection.
const rangesMigration = "ranges"

// upgradeBatch is how many documents an upgrade step holds in memory at once (the cursor's batch
// size).
const upgradeBatch = 500

// migration is the marker of a one-off data change, with when it ran.
type migration struct {
	ID     string    `bson:"_id"`
	DoneAt time.Time `bson:"done_at"`
}

// unlisted selects documents written by a release before the key id records (without the listed
// mark).
var unlisted = bson.E{Key: "listed", Value: bson.D{{Key: "$exists", Value: false}}}

// Upgrade carries what earlier releases stored over to the ranges (lists.go), once per database:
// public objects into the directory, sub-keys, associations and claim facts into their objects'
// lists (those lists of mongox.Log held copies of the same documents, so the documents are the
// source), each key's id record for keys stored before the records, and each profile version
// into its object's head. Then it drops the old lists and leaves a marker, and later calls do
// nothing. Each entry is keyed by the document it lists, so a run cut short and run again, or two
// replicas running at once, list nothing twice. Documents are read through cursors in batches,
// so memory stays bounded. It returns how many documents it listed.
func (s *Store) Upgrade(ctx context.Context) (int, error) {
	err := s.one(ctx, Migrations, mongox.ByID(rangesMigration), &migration{})
	switch {
	case err == nil:
		s.backfilled.Store(true)
		return 0, nil
	case !errors.Is(err, mongox.ErrNotFound):
		return 0, fmt.Errorf("read migration marker: %w", err)
	}
	// Each step reads its collection once, in _id order, which the _id index serves: every entry
	// is keyed by its data, so the order it is written in does not matter.
	steps := []struct {
		name   string
		coll   string
		filter bson.D
		list   func(context.Context, bson.Raw) error
	}{
		{"directory", Objects, bson.D{{Key: "visibility", Value: contract.Public}}, backfill(func(ctx context.Context, o *Object) error {
			return s.putEntry(ctx, directoryKey(o.ID), directoryEntry{ObjectID: o.ID})
		})},
		{"keys", Keys, bson.D{{Key: "owner", Value: false}}, backfill(func(ctx context.Context, k *Key) error {
			return s.putEntry(ctx, keyListKey(k), listedKey(k))
		})},
		{"key ids", Keys, bson.D{unlisted}, backfill(func(ctx context.Context, k *Key) error {
			return mongox.InsertOnce(ctx, s.db.Collection(KeyIDs), keyIDDoc{ID: k.KeyID, Digest: k.Digest})
		})},
		{"associations", Associations, bson.D{}, backfill(func(ctx context.Context, a *Association) error {
			return s.putEntry(ctx, associationKey(a), listedAssociation(a))
		})},
		{"claims", Facts, bson.D{{Key: "kind", Value: bson.D{{Key: "$in", Value: bson.A{factClaim, factLapse}}}}}, backfill(func(ctx context.Context, f *fact) error {
			return s.listClaimFact(ctx, *f)
		})},
		{"profiles", Facts, bson.D{{Key: "kind", Value: factProfile}}, backfill(func(ctx context.Context, f *fact) error {
			return s.raiseProfileHead(ctx, f.ObjectID, f.Seq)
		})},
	}
	n := 0
	for _, step := range steps {
		opts := options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetBatchSize(upgradeBatch).
			SetProjection(bson.D{{Key: "initial_llm_txt", Value: 0}, {Key: "_events", Value: 0}})
		cur, err := s.db.Collection(step.coll).Find(ctx, step.filter, opts)
		if err != nil {
			return n, fmt.Errorf("upgrade %s: %w", step.name, err)
		}
		for cur.Next(ctx) {
			if err := step.list(ctx, cur.Current); err != nil {
				_ = cur.Close(ctx)
				return n, fmt.Errorf("upgrade %s: %w", step.name, err)
			}
			n++
		}
		err = cur.Err()
		_ = cur.Close(ctx)
		if err != nil {
			return n, fmt.Errorf("upgrade %s: %w", step.name, err)
		}
	}
	if err := s.db.Collection(Lists).Drop(ctx); err != nil {
		return n, fmt.Errorf("drop old lists: %w", err)
	}
	if err := mongox.InsertOnce(ctx, s.db.Collection(Migrations), migration{ID: rangesMigration, DoneAt: time.Now()}); err != nil {
		return n, fmt.Errorf("write migration marker: %w", err)
	}
	s.backfilled.Store(true)
	return n, nil
}

// backfill decodes each document of a step as a T and lists it with list.
func backfill[T any](list func(context.Context, *T) error) func(context.Context, bson.Raw) error {
	return func(ctx context.Context, raw bson.Raw) error {
		var v T
		if err := bson.Unmarshal(raw, &v); err != nil {
			return err
		}
		return list(ctx, &v)
	}
}
