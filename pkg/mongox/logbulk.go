package mongox

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// AppendMany appends vs to list as consecutive entries, in order, with one insert of them all:
// for bulk loads (a benchmark's preload), where no other writer appends to list meanwhile. A
// concurrent writer that took one of the positions makes it fail with ErrTaken after the
// entries before that position were stored.
func AppendMany[T any](ctx context.Context, l Log, list string, vs []T) error {
	if len(vs) == 0 {
		return nil
	}
	n, err := l.Len(ctx, list)
	if err != nil {
		return err
	}
	at := time.Now().UTC()
	docs := make([]any, len(vs))
	for i, v := range vs {
		seq := n + 1 + int64(i)
		docs[i] = logDoc[T]{ID: entryID(list, seq), Entry: Entry[T]{Seq: seq, At: at, Value: v}}
	}
	if _, err := l.coll.InsertMany(ctx, docs, options.InsertMany().SetOrdered(true)); err != nil {
		if IsDuplicateKey(err) {
			return fmt.Errorf("log %s: %w", list, ErrTaken)
		}
		return fmt.Errorf("log %s: %w", list, err)
	}
	l.advance(ctx, list, n+int64(len(vs)))
	return nil
}
