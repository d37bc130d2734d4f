// Package store is feed-svc's MongoDB repository: feeds, their items and hidden marks, the
// page-shaped lists every read pages through, and the projections of other services' data that
// publishing, the lists and the box page need (objects, profile titles, sender blocks, verified claims), one file each.
//
// Every read here is by _id: a point read, one $in of the ids a page names, or a list's page as
// one find of an _id range (pages.go: documents keyed by the data they are read in, which MongoDB
// and the embedded FerretDB serve from the _id index). Counts are counters kept by inserts
// (counts.go). Facts are insert-only documents with natural ids, so concurrent writers and
// redelivered events never lose or double anything; the few documents that change (an object's hash, a title, a block) are
// changed by one partition's consumer only, in event order, and guarded against older events.
package store

import (
	"context"
	"errors"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/mongox"
)

// batch bounds the documents of one write command and the ids of one _id $in: the embedded store
// serves an _id $in of at most that many from its index, and a larger insert (an upgrade's, a
// preload's) would outlast the client's timeout in one command.
const batch = 1000

// Collection names.
const (
	Feeds   = "feeds"
	Items   = "items"
	Hidden  = "hidden_items"
	Objects = "network_objects"
	Titles  = "network_titles"
	Blocks  = "sender_blocks"
	Claims  = "network_claims"
	// Pages holds every list a read pages through, keyed by its data (pages.go).
	Pages = "feed_lists"
	// Counts holds the network's counters and the objects' analytics (counts.go).
	Counts = "feed_counts"
	// Quotas are the publishing places of each feed's lanes, <box>|<lane>|<day>|<n> (quota.go).
	Quotas = "feed_quotas"
)

// Indexes create every collection at start-up (FerretDB needs that). One entry indexes a field:
// the places of Quotas, by "at", which the hourly sweep (SweepQuotas) deletes by their time.
// Every other query is by _id (a point read, an $in, an _id range), so the other entries only
// declare their collections: they are Retired, and EnsureIndexes drops the index an earlier
// release made for each, which every insert and update of the collection kept up to date for
// no query (their keys stay as they were, so that the index's name is the one it made).
var Indexes = []mongox.Index{
	{Collection: Feeds, Keys: bson.D{{Key: "created_at", Value: 1}}, Retired: true},
	{Collection: Items, Keys: bson.D{{Key: "feed_id", Value: 1}}, Retired: true},
	{Collection: Hidden, Keys: bson.D{{Key: "feed_id", Value: 1}}, Retired: true},
	{Collection: Pages, Keys: bson.D{{Key: "at", Value: 1}}, Retired: true},
	{Collection: Counts, Keys: bson.D{{Key: "sum", Value: 1}}, Retired: true},
	{Collection: Objects, Keys: bson.D{{Key: "created_at", Value: 1}}, Retired: true},
	{Collection: Titles, Keys: bson.D{{Key: "version", Value: 1}}, Retired: true},
	{Collection: Blocks, Keys: bson.D{{Key: "at", Value: 1}}, Retired: true},
	{Collection: Claims, Keys: bson.D{{Key: "claims.verified_at", Value: 1}}, Retired: true},
	{Collection: Quotas, Keys: bson.D{{Key: "at", Value: 1}}},
}

// Store is the repository.
type Store struct {
	db   *mongo.Database
	sums *newestSums
}

// New returns a store over db.
func New(db *mongo.Database) *Store {
	return &Store{db: db, sums: &newestSums{m: map[string]*counterWriter{}}}
}

func (s *Store) c(name string) *mongo.Collection { return s.db.Collection(name) }

// find reads the document of collection coll with _id id into dst, and reports whether there is
// one (a point read; no document leaves dst as it was).
func (s *Store) find(ctx context.Context, coll, id string, dst any) (bool, error) {
	err := mongox.FindOne(ctx, s.c(coll), mongox.ByID(id), dst)
	if errors.Is(err, mongox.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
