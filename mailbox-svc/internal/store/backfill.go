package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// listsBackfill is the marker of BackfillLists in the migrations collection.
const listsBackfill = "lists-v1"

// backfillBatch is how many documents the backfill's cursors fetch at once.
const backfillBatch = 256

type migration struct {
	ID     string    `bson:"_id"`
	DoneAt time.Time `bson:"done_at"`
}

// BackfillLists builds the lists of the messages, threads and blocks stored by a release that did
// not keep them, once per database (a marker in migrations says it was done): each message into
// its thread's list (in the order the collection returns them, which is the order they were
// stored), then each thread to the front of its participants' mailboxes, the least recently
// active first, then each standing block into its recipient's blocked list. Every step is one
// the projection also makes, so a message sent meanwhile is listed once. It iterates with
// cursors in batches, so its memory does not grow with the store, and reports the documents it
// went through.
func (s *Store) BackfillLists(ctx context.Context) (int, error) {
	err := mongox.FindOne(ctx, s.migrations, mongox.ByID(listsBackfill), &migration{})
	switch {
	case err == nil:
		return 0, nil
	case !errors.Is(err, mongox.ErrNotFound):
		return 0, fmt.Errorf("read migration marker: %w", err)
	}
	n := 0
	type ref struct {
		ID       string `bson:"_id"`
		ThreadID string `bson:"thread_id"`
	}
	ids := bson.D{{Key: "_id", Value: 1}, {Key: "thread_id", Value: 1}}
	err = each(ctx, s.messages, bson.D{{Key: "seq", Value: bson.D{{Key: "$exists", Value: false}}}}, options.Find().SetProjection(ids),
		func(r ref) error { n++; return s.LogThreadUpTo(ctx, r.ThreadID, r.ID) })
	if err != nil {
		return n, fmt.Errorf("list messages: %w", err)
	}
	err = each(ctx, s.threads, bson.D{}, options.Find().SetProjection(ids).SetSort(bson.D{{Key: "last_message_at", Value: 1}}),
		func(r ref) error { n++; return s.ProjectMessage(ctx, r.ID) })
	if err != nil {
		return n, fmt.Errorf("list mailboxes: %w", err)
	}
	err = each(ctx, s.blocks, bson.D{}, options.Find().SetSort(bson.D{{Key: "created_at", Value: 1}}),
		func(b SenderBlock) error {
			n++
			lifted, err := s.lifted(ctx, &b)
			if err != nil || lifted {
				return err
			}
			return s.listBlock(ctx, &b)
		})
	if err != nil {
		return n, fmt.Errorf("list blocks: %w", err)
	}
	if err := mongox.InsertOnce(ctx, s.migrations, migration{ID: listsBackfill, DoneAt: time.Now()}); err != nil {
		return n, fmt.Errorf("write migration marker: %w", err)
	}
	return n, nil
}

// each calls fn for every document of coll matching filter, read with a cursor in batches.
func each[T any](ctx context.Context, coll *mongo.Collection, filter bson.D, opts *options.FindOptionsBuilder, fn func(T) error) error {
	cur, err := coll.Find(ctx, filter, opts.SetBatchSize(backfillBatch))
	if err != nil {
		return err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var doc T
		if err := cur.Decode(&doc); err != nil {
			return err
		}
		if err := fn(doc); err != nil {
			return err
		}
	}
	return cur.Err()
}
