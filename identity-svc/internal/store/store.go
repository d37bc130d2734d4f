// Package store is identity-svc's MongoDB repository: objects, their hashes (current and
// previous), keys (by SHA-256 digest only), associations and used payment vouchers, one file per
// collection.
package store

import (
	"context"
	"fmt"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/versions"
)

// Collection names.
const (
	Objects      = "objects"
	Hashes       = "hashes"
	Keys         = "keys"
	Associations = "associations"
	Vouchers     = "vouchers"
	// Revocations and KeyUsage are kept apart from the key documents: a revocation is an insert,
	// which no concurrent writer can undo (FerretDB applies an update as a whole-document
	// rewrite, so two updates of one key document could lose one), and usage, written on every
	// verification, never rewrites a key document.
	Revocations = "revocations"
	KeyUsage    = "key_usage"
	// Ranges holds the lists read in pages as _id ranges (lists.go): the directory and each
	// object's sub-keys, associations and claim facts.
	Ranges = "object_ranges"
	// Lists held the mongox.Log lists of an earlier release; Upgrade carries them over and drops
	// it.
	Lists = "lists"
	// Migrations holds one marker per one-off data change that has run (upgrade.go).
	Migrations = "migrations"
	// ProfileVersions holds each reported profile version of an object under a data key
	// (profile|<object>|<version>): the latest is one _id range read, newest first, limit 1.
	ProfileVersions = "profile_versions"
)

// ErrTaken says that a unique name (a hash, a voucher) is already held.
var ErrTaken = mongox.ErrTaken

// Indexes create the collections at start-up (FerretDB needs that). Every query of the serving
// path is by _id (a point read, an $in, an _id range), so no entry indexes anything: each only
// declares its collection. The entries of fields are Retired: EnsureIndexes drops the index an
// earlier release made for each (their keys stay as they were, so that the name is the one it
// made), which every write of the collection kept up to date for no query:
//   - keys' unique key_id: a key id is unique by the _id of its record in KeyIDs, which
//     InsertKey inserts before the key (a taken one is ErrTaken), and which the one-off Upgrade
//     makes for the keys stored before the records; key ids are ULIDs, so none made since can be
//     an older key's;
//   - keys' object_id and key_id: read by a filter only for a key stored before the key id
//     records, until the one-off Upgrade has made them (activeKey);
//   - objects' visibility, associations', facts', hashes' and association deletions' object_id,
//     the migration markers' done_at, the key id records' digest: no query filters on them but
//     the one-off Upgrade, which reads each collection once.
var Indexes = []mongox.Index{
	{Collection: Objects, Keys: bson.D{{Key: "visibility", Value: 1}, {Key: "_id", Value: -1}}, Retired: true},
	{Collection: Hashes, Keys: bson.D{{Key: "object_id", Value: 1}}, Retired: true},
	{Collection: Keys, Keys: bson.D{{Key: "key_id", Value: 1}}, Unique: true, Retired: true},
	{Collection: Keys, Keys: bson.D{{Key: "object_id", Value: 1}, {Key: "key_id", Value: 1}}, Retired: true},
	{Collection: Associations, Keys: bson.D{{Key: "object_id", Value: 1}, {Key: "_id", Value: 1}}, Retired: true},
	{Collection: Facts, Keys: bson.D{{Key: "object_id", Value: 1}}, Retired: true},
	{Collection: AssociationDeletions, Keys: bson.D{{Key: "object_id", Value: 1}}, Retired: true},
	{Collection: Ranges, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: ProfileVersions, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: Migrations, Keys: bson.D{{Key: "done_at", Value: 1}}, Retired: true},
	{Collection: KeyIDs, Keys: bson.D{{Key: "digest", Value: 1}}, Retired: true},
}

// Store is the repository.
type Store struct {
	db    *mongo.Database
	cache *versions.Cache[Object] // nil: every read folds
	// backfilled is set once Upgrade has run on the database (upgrade.go).
	backfilled atomic.Bool
}

// New returns a store over db.
func New(db *mongo.Database) *Store {
	return &Store{db: db}
}

// insert stores one document, naming the collection in the error; a duplicate _id is ErrTaken.
func (s *Store) insert(ctx context.Context, coll string, doc any) error {
	return mongox.Insert(ctx, s.db.Collection(coll), doc)
}

// all runs a find and decodes every document into out.
func (s *Store) all(ctx context.Context, coll string, filter any, out any, opts ...options.Lister[options.FindOptions]) error {
	cur, err := s.db.Collection(coll).Find(ctx, filter, opts...)
	if err != nil {
		return fmt.Errorf("store %s: %w", coll, err)
	}
	if err := cur.All(ctx, out); err != nil {
		return fmt.Errorf("store %s: %w", coll, err)
	}
	return nil
}

// one decodes the document matching filter; mongox.ErrNotFound if none.
func (s *Store) one(ctx context.Context, coll string, filter, dst any, opts ...options.Lister[options.FindOneOptions]) error {
	return mongox.FindOne(ctx, s.db.Collection(coll), filter, dst, opts...)
}

// deleteOne removes the document matching filter and reports whether there was one.
func (s *Store) deleteOne(ctx context.Context, coll string, filter any) (bool, error) {
	res, err := s.db.Collection(coll).DeleteOne(ctx, filter)
	if err != nil {
		return false, fmt.Errorf("store %s: %w", coll, err)
	}
	return res.DeletedCount > 0, nil
}

// DB is the database the store works on, for tests that inspect what it wrote.
func (s *Store) DB() *mongo.Database { return s.db }
