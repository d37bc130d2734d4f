package mongox

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// eachBatch is how many documents Each holds in memory at a time.
const eachBatch = 500

// Each decodes every document of coll that filter selects (opts may sort or project them; nil
// for none) and hands it to fn, read with a cursor in batches, so that memory holds a batch
// whatever the collection holds. It is for one-off upgrade steps, which read what an earlier
// layout kept (under Unbounded): a request reads an _id range.
func Each[T any](ctx context.Context, coll *mongo.Collection, filter any, opts *options.FindOptionsBuilder, fn func(T) error) error {
	if opts == nil {
		opts = options.Find()
	}
	cur, err := coll.Find(ctx, filter, opts.SetBatchSize(eachBatch))
	if err != nil {
		return fmt.Errorf("read %s: %w", coll.Name(), err)
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var doc T
		if err := cur.Decode(&doc); err != nil {
			return fmt.Errorf("decode %s: %w", coll.Name(), err)
		}
		if err := fn(doc); err != nil {
			return err
		}
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("read %s: %w", coll.Name(), err)
	}
	return nil
}
