// Package store is claims-svc's MongoDB repository: claims, their state changes, the checks of
// their proofs, the re-check schedule and the leases of scheduled re-checks.
//
// What concurrent requests or replicas may record at once is an insert with a natural _id, never
// an update: FerretDB applies an update as read-document-then-write-document, so two updates of
// one claim would lose one of them. A claim is inserted once and never changes; each change of
// its status is a new state document numbered after the one it follows, so that two replicas
// deciding the same change collide on the _id and only one event is published; every check is
// its own document; a scheduled re-check first takes a lease for its claim and period.
//
// Every list is an _id range (mongox.Range): an object's claims, a claim's states and checks, the
// claims due for a re-check in a period. A page is one find, whatever the collections hold.
package store

import (
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/mongox"
)

// Collection names.
const (
	// Claims holds each claim under its id (the point read of a claim's routes).
	Claims = "claims"
	// ClaimLists holds each object's claims again, under <object>|<claim id>: claim ids are
	// ULIDs, so the range of an object is its claims oldest first.
	ClaimLists = "claim_lists"
	// Places are the places of the per-object claims quota, <object>|<place>.
	Places = "claim_places"
	// States are the changes of a claim's status, <claim>|<gen>.
	States = "claim_states"
	// Checks are the looks at a claim's proof, <claim>|<time>|<check id>.
	Checks = "claim_checks"
	// Due are the claims due for a re-check in a period, <period>|<claim>.
	Due    = "claim_due"
	Leases = "recheck_leases"
	// Migrations holds the markers of one-off data changes and the re-check loop's progress.
	Migrations = "migrations"
	// Logs held the lists of an earlier release (mongox.Log); Upgrade carries them over and
	// drops it.
	Logs = "claim_logs"
)

// ErrTaken says that a document with the same _id exists: another writer got there first.
var ErrTaken = mongox.ErrTaken

// Indexes are the indexes real MongoDB needs for the queries below (and, on FerretDB, the
// collections created at start-up). Every read is by _id or an _id range; one entry indexes a
// field: the leases, by expires_at, which the re-check loop sweeps by it (mongox.Leases.Sweep).
// The others only declare their collections: claims' object_id and the markers' done_at are
// Retired, and EnsureIndexes drops the index an earlier release made for each (their keys stay
// as they were, so that the name is the one it made). No query filters on either: the one-off
// Upgrade reads the claims in _id order.
var Indexes = []mongox.Index{
	{Collection: Claims, Keys: bson.D{{Key: "object_id", Value: 1}}, Retired: true},
	{Collection: ClaimLists, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: Places, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: States, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: Checks, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: Due, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: Leases, Keys: bson.D{{Key: "expires_at", Value: 1}}},
	{Collection: Migrations, Keys: bson.D{{Key: "done_at", Value: 1}}, Retired: true},
}

// Store is the repository.
type Store struct {
	db *mongo.Database
}

// New returns a store over db.
func New(db *mongo.Database) *Store { return &Store{db: db} }

func (s *Store) c(name string) *mongo.Collection { return s.db.Collection(name) }

// Leases are the leases of the scheduled jobs, one per item and period.
func (s *Store) Leases() mongox.Leases { return mongox.NewLeases(s.c(Leases)) }
