package mongox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// LogLoad writes many appends to a Log's lists in bulk, for a preload (a benchmark's, a
// migration's) while nothing else appends to those lists. Each append is staged at the position
// after its list's last one (the list's length is read once per list), and Flush writes the
// staged entries and their keys' markers with ordered insertMany commands of loadBatch
// documents, then moves each list's head hint. The documents are those Append and AppendOnce
// write, so a loaded list pages, counts and refuses a redelivered key exactly as an appended one
// does. A LogLoad is not safe for concurrent use.
type LogLoad struct {
	l     Log
	last  map[string]int64 // list → last position staged or found
	keys  map[string]int64 // marker id → position, of the keys staged since the last Flush
	fresh map[string]bool  // keys the caller vouches were never appended (see Fresh)
	docs  []any
	moved map[string]int64 // list → last position staged since the last Flush
}

// loadBatch is how many documents one insertMany of a Flush carries.
const loadBatch = 1000

// Load returns a bulk loader of l's lists.
func (l Log) Load() *LogLoad {
	return &LogLoad{l: l, last: map[string]int64{}, keys: map[string]int64{}, fresh: map[string]bool{},
		moved: map[string]int64{}}
}

// Fresh declares keys that were never appended to any list of the Log (the ids of events never
// projected before), so that their first keyed append stages without reading a marker. A key
// declared fresh that was appended after all makes Flush fail on its marker.
func (b *LogLoad) Fresh(keys ...string) {
	for _, k := range keys {
		b.fresh[k] = true
	}
}

// LoadAppend stages v as the next entry of list, under key when key is not "" (as AppendOnce:
// a key already appended or staged reports that position and added false; a key neither staged
// nor declared fresh costs one point read of its marker).
func LoadAppend[T any](ctx context.Context, b *LogLoad, list, key string, v T) (seq int64, added bool, err error) {
	if key != "" {
		if seq, ok := b.keys[keyID(list, key)]; ok {
			return seq, false, nil
		}
		if !b.fresh[key] {
			var mark logMark
			err := FindOne(ctx, b.l.coll, ByID(keyID(list, key)), &mark)
			if err == nil {
				if seq, err = b.l.landed(ctx, list, key, mark); err != nil || seq > 0 {
					return seq, false, err
				}
				return 0, false, fmt.Errorf("log %s: key %s is being appended: load it after", list, key)
			}
			if !errors.Is(err, ErrNotFound) {
				return 0, false, err
			}
		}
	}
	last, ok := b.last[list]
	if !ok {
		if last, err = b.l.Len(ctx, list); err != nil {
			return 0, false, err
		}
	}
	seq = last + 1
	b.last[list], b.moved[list] = seq, seq
	b.docs = append(b.docs, logDoc[T]{ID: entryID(list, seq), Entry: Entry[T]{Seq: seq, Key: key, At: time.Now().UTC(), Value: v}})
	if key != "" {
		b.keys[keyID(list, key)] = seq
		b.docs = append(b.docs, logMark{ID: keyID(list, key), Seq: seq})
	}
	return seq, true, nil
}

// Staged is how many documents the next Flush writes (entries and markers).
func (b *LogLoad) Staged() int { return len(b.docs) }

// Flush writes what was staged: entries and markers in insertMany batches, then the head hint
// of every list appended to, in one command.
func (b *LogLoad) Flush(ctx context.Context) error {
	for start := 0; start < len(b.docs); start += loadBatch {
		if _, err := b.l.coll.InsertMany(ctx, b.docs[start:min(start+loadBatch, len(b.docs))]); err != nil {
			return fmt.Errorf("log load into %s: %w", b.l.coll.Name(), err)
		}
	}
	if len(b.moved) > 0 {
		heads := make([]mongo.WriteModel, 0, len(b.moved))
		for list, seq := range b.moved {
			heads = append(heads, mongo.NewUpdateOneModel().SetFilter(ByID(headID(list))).SetUpsert(true).
				SetUpdate(bson.D{{Key: "$max", Value: bson.D{{Key: "seq", Value: seq}}}}))
			b.l.last.raise(list, seq)
		}
		if _, err := b.l.coll.BulkWrite(ctx, heads, options.BulkWrite().SetOrdered(false)); err != nil {
			return fmt.Errorf("log load heads into %s: %w", b.l.coll.Name(), err)
		}
	}
	b.docs, b.keys, b.fresh, b.moved = nil, map[string]int64{}, map[string]bool{}, map[string]int64{}
	return nil
}
