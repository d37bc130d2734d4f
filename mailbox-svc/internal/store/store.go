// Package store is mailbox-svc's MongoDB repository, one file per collection: threads, messages,
// read receipts, sender blocks and their lifting, the current hashes of the objects it has seen,
// the admission rules of recipients (a projection of context-svc's rules) and idempotency records.
//
// Every fact that concurrent requests may record at once is its own insert-only document with a
// natural _id: a message, a read receipt (one per message), a block (recipient:sender), an
// idempotency record. Counts are the lengths of lists (lists.go), never counters updated in
// place: MongoDB would make an $inc atomic, but FerretDB applies an update as
// read-document-then-write-document with no isolation, so concurrent $inc on one document lose
// updates; a unique _id, by contrast, holds on both. For the same reason the ids of a write's
// events (events.EventsField) are recorded only in documents that are inserted once. Every read a
// request makes is by _id, the one filter FerretDB pushes down.
package store

import (
	"context"
	"fmt"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
)

// Collection names.
const (
	Threads       = "threads"
	Messages      = "messages"
	Reads         = "reads"
	SenderBlocks  = "sender_blocks"
	Unblocks      = "sender_unblocks"
	ObjectHashes  = "object_hashes"
	Admissions    = "admissions"
	Idempotencies = "idempotency_keys"
	// SignedNonces records the nonces of signed sends, so that a replayed signature is refused.
	SignedNonces = "signed_nonces"
	// Lists holds the lists (mongox.Log) that threads, mailboxes and blocked lists page through.
	Lists = "lists"
	// BoxThreads holds, per mailbox and thread, where the thread stands in the mailbox's list and
	// its counts as the mailbox shows them (BoxThread).
	BoxThreads = "box_threads"
	// Migrations holds the markers of one-off data changes.
	Migrations = "migrations"
)

// Indexes are the indexes real MongoDB needs for the queries below (and the collections created
// at start-up, which FerretDB needs). Every list read is by _id: threads, mailboxes and blocked
// lists are mongox.Log lists (see lists.go), so no filtered query serves a request.
var Indexes = []mongox.Index{
	// The start-up backfill's scans (store.BackfillLists), once per database.
	{Collection: Threads, Keys: bson.D{{Key: "last_message_at", Value: 1}}},
	{Collection: Messages, Keys: bson.D{{Key: "seq", Value: 1}}},
	{Collection: SenderBlocks, Keys: bson.D{{Key: "created_at", Value: 1}}},
	{Collection: Reads, Keys: bson.D{{Key: "thread_id", Value: 1}}},
	{Collection: Lists, Keys: bson.D{{Key: "at", Value: 1}}},
	{Collection: BoxThreads, Keys: bson.D{{Key: "object_id", Value: 1}}},
	{Collection: Migrations, Keys: bson.D{{Key: "done_at", Value: 1}}},
	{Collection: Idempotencies, Keys: bson.D{{Key: "expires_at", Value: 1}}},
	{Collection: SignedNonces, Keys: bson.D{{Key: "expires_at", Value: 1}}},
}

// Store is the repository.
type Store struct {
	threads, messages, reads, blocks, unblocks, hashes, admissions, idempotency, nonces *mongo.Collection
	boxThreads, migrations                                                              *mongo.Collection
	lists                                                                               mongox.Log
	// newThreads and newMessages insert the threads and messages of concurrent sends together.
	newThreads, newMessages *mongox.Batcher
	// remembered are the objects whose hash record this process has seen stored.
	remembered *lru.Cache[string, struct{}]
	// participants are the participants of the threads this process has read or opened: a
	// thread's participants never change, so a reply checks them without a store command.
	participants *lru.Cache[string, []string]
}

// New returns a store over db.
func New(db *mongo.Database) *Store {
	threads, messages := db.Collection(Threads), db.Collection(Messages)
	return &Store{
		threads: threads, messages: messages, reads: db.Collection(Reads),
		newThreads: mongox.NewBatcher(threads, writeBatch, writeTimeout), newMessages: mongox.NewBatcher(messages, writeBatch, writeTimeout),
		blocks: db.Collection(SenderBlocks), unblocks: db.Collection(Unblocks),
		hashes: db.Collection(ObjectHashes), admissions: db.Collection(Admissions), idempotency: db.Collection(Idempotencies),
		nonces: db.Collection(SignedNonces), boxThreads: db.Collection(BoxThreads), migrations: db.Collection(Migrations),
		lists:      mongox.NewLog(db.Collection(Lists)),
		remembered: mustLRU[struct{}](100_000), participants: mustLRU[[]string](100_000),
	}
}

// mustLRU returns a cache of at most size entries; only what never changes once stored is kept.
func mustLRU[V any](size int) *lru.Cache[string, V] {
	c, err := lru.New[string, V](size)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return c
}

// Sends' inserts go in batches of up to writeBatch documents, each timing out after writeTimeout.
const (
	writeBatch   = 256
	writeTimeout = 30 * time.Second
)

// insertBatched inserts doc with the next batch of b; it reports false, without error, when a
// document with its _id exists.
func insertBatched(ctx context.Context, b *mongox.Batcher, doc any) (bool, error) {
	inserted, err := b.InsertNew(ctx, doc)
	if err != nil {
		return false, err
	}
	return inserted[0], nil
}

// insertOnce inserts doc; it reports false, without error, when a document with its _id exists.
func insertOnce(ctx context.Context, coll *mongo.Collection, doc any) (bool, error) {
	_, err := coll.InsertOne(ctx, doc)
	if mongox.IsDuplicateKey(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store %s: %w", coll.Name(), err)
	}
	return true, nil
}

// withoutEvents is the projection of reads that have no use for the ids of a write's events.
var withoutEvents = bson.D{{Key: events.EventsField, Value: 0}}
