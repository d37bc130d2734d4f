// Package store is context-svc's MongoDB repository: every version of an object's context (the
// current one is the profile), a head hint per object, the versions of decision memory, the sync
// configuration, sources, context links and the decisions learned from graph-svc, and the lists
// that page an object's sources, links and decisions. One file per collection.
package store

import (
	"log/slog"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
)

// Collection names.
const (
	Versions = "versions"
	Heads    = "heads"
	Syncs    = "syncs"
	Sources  = "sources"
	// SourceSlots are the numbered places of an object's sources; Fetches what was last fetched
	// from each URL source.
	SourceSlots = "source_slots"
	Fetches     = "fetches"
	Links       = "links"
	Decisions   = "decisions"
	// Blocks and Names project mailbox-svc's sender blocks and identity-svc's hash changes.
	Blocks = "blocks"
	Names  = "names"
	// Memories are the versions of objects' decision memory, MemoryHeads their head hints.
	Memories    = "memory"
	MemoryHeads = "memory_heads"
	// Migrations holds the markers of one-off data changes.
	Migrations = "migrations"
	// Ranges holds each object's sources, links and decisions as _id ranges (lists.go).
	Ranges = "object_ranges"
	// Lists held the mongox.Log lists of an earlier release; Upgrade carries them over and drops
	// it.
	Lists = "lists"
)

// Indexes are the indexes real MongoDB needs for the queries below. Every read is by _id or an _id
// range (lists.go), so these create the collections at start-up.
var Indexes = []mongox.Index{
	{Collection: Versions, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: Memories, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: MemoryHeads, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: Migrations, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: Sources, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: SourceSlots, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: Fetches, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: Links, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: Decisions, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: Ranges, Keys: bson.D{{Key: "_id", Value: 1}}},
}

// Store is the repository.
type Store struct {
	versions, heads, syncs, sources, sourceSlots, fetches, links, decisions, blocks, names *mongo.Collection
	memory, memoryHeads, migrations, ranges, lists                                         *mongo.Collection
	log                                                                                    *slog.Logger
	// MaxAttempts bounds the retries of a write that keeps losing the race for a version.
	MaxAttempts int
}

// New returns a store over db; log receives the failures of best-effort steps.
func New(db *mongo.Database, log *slog.Logger) *Store {
	return &Store{log: log,
		versions: db.Collection(Versions), heads: db.Collection(Heads), syncs: db.Collection(Syncs),
		sources: db.Collection(Sources), sourceSlots: db.Collection(SourceSlots), fetches: db.Collection(Fetches),
		links: db.Collection(Links), decisions: db.Collection(Decisions),
		blocks: db.Collection(Blocks), names: db.Collection(Names),
		memory: db.Collection(Memories), memoryHeads: db.Collection(MemoryHeads), migrations: db.Collection(Migrations),
		ranges: db.Collection(Ranges), lists: db.Collection(Lists),
		MaxAttempts: 32,
	}
}

// withoutEvents leaves out the ids of the events a document's write staged, which only the
// outbox reads.
var withoutEvents = bson.D{{Key: events.EventsField, Value: 0}}
