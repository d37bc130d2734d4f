// Package store is claims-svc's MongoDB repository: claims, their state changes, the checks of
// their proofs, and the leases of scheduled re-checks.
//
// What concurrent requests or replicas may record at once is an insert with a natural _id, never
// an update: FerretDB applies an update as read-document-then-write-document, so two updates of
// one claim would lose one of them. A claim is inserted once and never changes; each change of
// its status is a new state document numbered after the one it follows, so that two replicas
// deciding the same change collide on the _id and only one event is published; every check is
// its own document; a scheduled re-check first takes a lease for its claim and period.
package store

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/mongox"
)

// Collection names.
const (
	Claims = "claims"
	States = "claim_states"
	Checks = "claim_checks"
	Leases = "recheck_leases"
	// Logs holds the lists (mongox.Log) by which every read finds its documents with point reads
	// (lists.go): each object's claims, each claim's checks, the claims due for a re-check in
	// each period.
	Logs       = "claim_logs"
	Migrations = "migrations"
)

// ErrTaken says that a document with the same _id exists: another writer got there first.
var ErrTaken = mongox.ErrTaken

// Indexes are the indexes real MongoDB needs for the queries below (and, on FerretDB, the
// collections created at start-up).
// Requests read claims, states and checks by _id only; the claim_id index serves the one-off
// migration of checks stored before the lists (migrate.go).
var Indexes = []mongox.Index{
	{Collection: Claims, Keys: bson.D{{Key: "object_id", Value: 1}}},
	{Collection: States, Keys: bson.D{{Key: "claim_id", Value: 1}}},
	{Collection: Checks, Keys: bson.D{{Key: "claim_id", Value: 1}, {Key: "at", Value: -1}}},
	{Collection: Leases, Keys: bson.D{{Key: "expires_at", Value: 1}}},
	{Collection: Logs, Keys: bson.D{{Key: "at", Value: 1}}},
	{Collection: Migrations, Keys: bson.D{{Key: "done_at", Value: 1}}},
}

// Store is the repository.
type Store struct {
	db  *mongo.Database
	log mongox.Log
}

// New returns a store over db.
func New(db *mongo.Database) *Store { return &Store{db: db, log: mongox.NewLog(db.Collection(Logs))} }

func (s *Store) c(name string) *mongo.Collection { return s.db.Collection(name) }

// insert inserts doc into coll; ErrTaken when its _id exists.
func (s *Store) insert(ctx context.Context, coll string, doc any) error {
	return mongox.Insert(ctx, s.c(coll), doc)
}

// Leases are the leases of the scheduled jobs, one per item and period.
func (s *Store) Leases() mongox.Leases { return mongox.NewLeases(s.c(Leases)) }
