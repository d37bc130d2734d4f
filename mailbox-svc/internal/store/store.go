// Package store is mailbox-svc's MongoDB repository, one file per collection: threads, their
// messages, mailboxes, read state, sender blocks and their lifting, the current hashes of the
// objects it has seen, the admission rules of recipients (a projection of context-svc's rules),
// idempotency records and signature nonces.
//
// Every list is a range of _ids (DESIGN §10): a thread's messages are keyed <thread>|<seq>, a
// mailbox's threads <object>|<scope>|<last message time>|<thread>, so that a page is one find
// with an _id range, an _id sort and a limit. FerretDB applies an update as
// read-document-then-write-document with no isolation, so two updates of one document at once
// may lose one of them; a unique _id, by contrast, holds on both stores. So every fact that
// concurrent requests may record at once is an insert under a natural _id: a message claims its
// place in its thread by inserting at the next sequence number (a taken one is a duplicate key,
// and the send takes the next), which makes a thread's count the sequence of its last message,
// exact whatever the concurrency. The ids of a write's events (events.EventsField) are recorded
// only in documents that are inserted once.
package store

import (
	"context"
	"fmt"

	lru "github.com/hashicorp/golang-lru/v2"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/mongox"
)

// Collection names.
const (
	Threads = "threads"
	// Messages holds each thread's messages under <thread>|<seq> and, beside them, a pointer from
	// each message id to its place (MessageRef).
	Messages = "thread_messages"
	// Mailboxes holds each mailbox's threads under <object>|<scope>|<time>|<thread> (BoxEntry).
	Mailboxes = "mailboxes"
	// ReadStates holds what each participant of a thread has read (ReadState).
	ReadStates    = "read_states"
	SenderBlocks  = "sender_blocks"
	Unblocks      = "sender_unblocks"
	ObjectHashes  = "object_hashes"
	Admissions    = "admissions"
	Idempotencies = "idempotency_keys"
	// SignedNonces records the nonces of signed sends, so that a replayed signature is refused.
	SignedNonces = "signed_nonces"
	// Migrations holds the markers of one-off data changes.
	Migrations = "migrations"
)

// Collections of the layout before data-keyed lists, read once by Upgrade.
const (
	oldMessages = "messages"
	oldReads    = "reads"
)

// Indexes are the indexes real MongoDB needs beside _id, and through them the collections
// created at start-up, which FerretDB needs. Every read a request makes of this layout's
// collections is by _id; four entries index something:
//   - Idempotencies and SignedNonces by expires_at: the periodic sweeps (SweepIdempotency,
//     SweepNonces) delete the expired ones by it;
//   - the old layout's messages and receipts by thread_id: carrying a thread over
//     (UpgradeThread, from a request or the one-off Upgrade) reads the thread's by it, once per
//     thread, and nothing writes those collections any more, so the index costs no write.
//
// The other entries only declare their collections: they are Retired, and EnsureIndexes drops
// the index an earlier release made for each (their keys stay as they were, so that the name is
// the one it made), which every send kept up to date for no query. The one-off Upgrade reads the
// threads not carried over by their layout in one pass over the collection, which needs none.
var Indexes = []mongox.Index{
	{Collection: Threads, Keys: bson.D{{Key: "layout", Value: 1}}, Retired: true},
	{Collection: Messages, Keys: bson.D{{Key: "thread_id", Value: 1}}, Retired: true},
	{Collection: Mailboxes, Keys: bson.D{{Key: "object_id", Value: 1}}, Retired: true},
	{Collection: ReadStates, Keys: bson.D{{Key: "reader_id", Value: 1}}, Retired: true},
	{Collection: SenderBlocks, Keys: bson.D{{Key: "created_at", Value: 1}}, Retired: true},
	{Collection: Migrations, Keys: bson.D{{Key: "done_at", Value: 1}}, Retired: true},
	{Collection: Idempotencies, Keys: bson.D{{Key: "expires_at", Value: 1}}},
	{Collection: SignedNonces, Keys: bson.D{{Key: "expires_at", Value: 1}}},
	{Collection: oldMessages, Keys: bson.D{{Key: "thread_id", Value: 1}}},
	{Collection: oldReads, Keys: bson.D{{Key: "thread_id", Value: 1}}},
}

// Store is the repository.
type Store struct {
	threads, messages, mailboxes, readStates, blocks, unblocks, hashes, admissions, idempotency, nonces *mongo.Collection
	migrations, oldMessages, oldReads                                                                   *mongo.Collection
	// remembered are the objects whose hash record this process has seen stored.
	remembered *lru.Cache[string, struct{}]
	// participants are the participants of the threads this process has read or opened: a
	// thread's participants never change, so a reply checks them without a store command.
	participants *lru.Cache[string, []string]
}

// New returns a store over db.
func New(db *mongo.Database) *Store {
	return &Store{
		threads: db.Collection(Threads), messages: db.Collection(Messages), mailboxes: db.Collection(Mailboxes),
		readStates: db.Collection(ReadStates), blocks: db.Collection(SenderBlocks), unblocks: db.Collection(Unblocks),
		hashes: db.Collection(ObjectHashes), admissions: db.Collection(Admissions), idempotency: db.Collection(Idempotencies),
		nonces: db.Collection(SignedNonces), migrations: db.Collection(Migrations),
		oldMessages: db.Collection(oldMessages), oldReads: db.Collection(oldReads),
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

// byID reads the document of coll with _id id; mongox.ErrNotFound if there is none.
func byID[T any](ctx context.Context, coll *mongo.Collection, id string) (*T, error) {
	var doc T
	if err := mongox.FindOne(ctx, coll, mongox.ByID(id), &doc); err != nil {
		return nil, err
	}
	return &doc, nil
}

// ValidID reports whether id (a thread or message id taken from a request) can be part of a data
// key; any other id names nothing stored.
func ValidID(id string) bool { return id != "" && len(id) <= 64 && mongox.KeyPart(id) }
