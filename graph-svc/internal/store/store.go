// Package store is graph-svc's MongoDB repository: the threads it knows, the nodes of their
// graphs, the validity facts of superseded nodes, private guidance versions, tracked sources
// with their pulls, the leases of scheduled re-pulls, the projections of other services' data,
// the memory index, and the lists pages read (lists.go, keyed by the data they are read in).
// One file per collection, or per kind of list.
//
// Everything is an insert with a natural or random _id and never changes afterwards: FerretDB
// applies an update as read-document-then-write-document, so concurrent updates of one document
// would lose writes. A node superseded by a decision keeps its document and gains an inserted
// validity fact; a guidance change is a new version; a pull is a new document.
package store

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/mongox"
)

// Collection names.
const (
	Threads  = "threads"
	Nodes    = "nodes"
	Validity = "node_validity"
	Sources  = "sources"
	Pulls    = "source_pulls"
	Leases   = "pull_leases"
	Hashes   = "object_hashes"
	// GraphLog is the collection of the lists of earlier releases, read once by UpgradeLists.
	GraphLog = "graph_log"
	Blocks   = "sender_blocks"
)

// Indexes are the indexes real MongoDB needs for the queries below (and, on FerretDB, the
// collections created at start-up). Every read is by _id: a point read, or the _id range of a
// list (lists.go).
var Indexes = idIndexes(Leases, Threads, Nodes, Validity, Sources, Pulls, Hashes, Blocks, Lists, TookPart, MemoryPostings)

func idIndexes(colls ...string) []mongox.Index {
	out := make([]mongox.Index, len(colls))
	for i, c := range colls {
		out[i] = mongox.Index{Collection: c, Keys: bson.D{{Key: "_id", Value: 1}}}
	}
	return out
}

// Store is the repository.
type Store struct {
	db *mongo.Database
	// hashesCopied is set once UpgradeHashCopies has run on the database (by any replica): from
	// then on every object of the Hashes projection has its copy (hashCopy), so Cards no longer
	// reads the projection for the objects it finds none of.
	hashesCopied atomic.Bool
}

// New returns a store over db.
func New(db *mongo.Database) *Store { return &Store{db: db} }

func (s *Store) c(name string) *mongo.Collection { return s.db.Collection(name) }

// find reads the document of coll whose _id is id into dst and reports whether there is one.
func (s *Store) find(ctx context.Context, coll, id string, dst any) (bool, error) {
	err := mongox.FindOne(ctx, s.c(coll), mongox.ByID(id), dst)
	if errors.Is(err, mongox.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// byID reads the document of coll whose _id is id; mongox.ErrNotFound if there is none.
func byID[T any](ctx context.Context, s *Store, coll, id string) (*T, error) {
	var v T
	if err := mongox.FindOne(ctx, s.c(coll), mongox.ByID(id), &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// Leases are the leases of the scheduled jobs, one per item and period.
func (s *Store) Leases() mongox.Leases { return mongox.NewLeases(s.c(Leases)) }

// DropLease deletes one lease by its key: a point delete.
func (s *Store) DropLease(ctx context.Context, key string) error {
	if _, err := s.c(Leases).DeleteOne(ctx, mongox.ByID(key)); err != nil {
		return fmt.Errorf("store leases: %w", err)
	}
	return nil
}
