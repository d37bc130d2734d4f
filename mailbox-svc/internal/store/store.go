// Package store is mailbox-svc's MongoDB repository: threads, messages, read receipts, sender
// blocks, the current hashes of the objects it has seen, and idempotency records.
//
// Every fact that concurrent requests may record at once is its own insert-only document with a
// natural _id: a message, a read receipt (one per message), a block (recipient:sender), an
// idempotency record. Counts are then counted, never kept as counters. MongoDB would make an $inc
// atomic, but FerretDB applies an update as read-document-then-write-document with no isolation,
// so concurrent $inc on one document lose updates; a unique _id, by contrast, holds on both. For
// the same reason the ids of a write's events (events.EventsField) are recorded only in documents
// that are inserted once.
package store

import (
	"context"
	"errors"
	"fmt"

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
	Idempotencies = "idempotency_keys"
)

// ErrNotFound says that no document matches.
var ErrNotFound = errors.New("not found")

// Indexes are the indexes real MongoDB needs for the queries below.
var Indexes = []mongox.Index{
	{Collection: Threads, Keys: bson.D{{Key: "participants", Value: 1}, {Key: "last_message_at", Value: -1}, {Key: "_id", Value: -1}}},
	{Collection: Messages, Keys: bson.D{{Key: "thread_id", Value: 1}, {Key: "_id", Value: 1}}},
	{Collection: Messages, Keys: bson.D{{Key: "thread_id", Value: 1}, {Key: "to_id", Value: 1}}},
	{Collection: Reads, Keys: bson.D{{Key: "thread_id", Value: 1}, {Key: "reader_id", Value: 1}}},
	{Collection: SenderBlocks, Keys: bson.D{{Key: "recipient_id", Value: 1}, {Key: "created_at", Value: 1}}},
	{Collection: Idempotencies, Keys: bson.D{{Key: "expires_at", Value: 1}}},
}

// Store is the repository.
type Store struct{ db *mongo.Database }

// New returns a store over db.
func New(db *mongo.Database) *Store { return &Store{db: db} }

func (s *Store) c(name string) *mongo.Collection { return s.db.Collection(name) }

func byID(id any) bson.D { return bson.D{{Key: "_id", Value: id}} }

// insertOnce inserts doc; it reports false, without error, when a document with its _id exists.
func (s *Store) insertOnce(ctx context.Context, coll string, doc any) (bool, error) {
	_, err := s.c(coll).InsertOne(ctx, doc)
	if mongox.IsDuplicateKey(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store %s: %w", coll, err)
	}
	return true, nil
}

// findByID decodes the document with _id id into dst; ErrNotFound if there is none.
func (s *Store) findByID(ctx context.Context, coll string, id any, dst any) error {
	err := s.c(coll).FindOne(ctx, byID(id)).Decode(dst)
	if mongox.IsNotFound(err) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("store %s: %w", coll, err)
	}
	return nil
}

// countBy counts the documents of coll matching filter, grouped by the value of field.
func (s *Store) countBy(ctx context.Context, coll string, filter bson.D, field string) (map[string]int, error) {
	cur, err := s.c(coll).Aggregate(ctx, bson.A{
		bson.D{{Key: "$match", Value: filter}},
		bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$" + field}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
	})
	if err != nil {
		return nil, fmt.Errorf("store %s: count: %w", coll, err)
	}
	var rows []struct {
		Key string `bson:"_id"`
		N   int    `bson:"n"`
	}
	if err := cur.All(ctx, &rows); err != nil {
		return nil, fmt.Errorf("store %s: count: %w", coll, err)
	}
	out := make(map[string]int, len(rows))
	for _, r := range rows {
		out[r.Key] = r.N
	}
	return out, nil
}

// withoutEvents is the projection of reads that have no use for the ids of a write's events.
var withoutEvents = bson.D{{Key: events.EventsField, Value: 0}}
