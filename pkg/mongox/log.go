package mongox

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"golang.org/x/sync/errgroup"
)

// Log keeps append-only lists in one collection so that a list's newest page, the page before
// a position, one entry and the list's length each cost point reads on _id, whatever the list
// or the collection holds. FerretDB pushes down only _id equality (any other filter, sort or
// limit reads the whole collection), and MongoDB serves _id from its own index, so the cost is
// the same on both.
//
// Entry n (from 1) of list L is the document "L#<n>", inserted once: its insert is what claims
// position n, so two writers never share a position and no position is skipped. "L#head" is a
// hint of L's length, written after each append; concurrent writers may leave it behind (an
// update on FerretDB is read-then-rewrite), so readers step forward from it to the first free
// position, a few point reads at most. "L@<key>" records where a natural key was appended (0
// while it is being appended).
type Log struct{ coll *mongo.Collection }

// NewLog returns the lists kept in coll.
func NewLog(coll *mongo.Collection) Log { return Log{coll: coll} }

// Entry is one element of a list.
type Entry[T any] struct {
	Seq   int64     `bson:"seq"`
	Key   string    `bson:"key,omitempty"`
	At    time.Time `bson:"at"`
	Value T         `bson:"v"`
}

type logDoc[T any] struct {
	ID       string `bson:"_id"`
	Entry[T] `bson:",inline"`
}

type logHead struct {
	ID  string `bson:"_id"`
	Seq int64  `bson:"seq"`
}

// recentKeys is how far back AppendOnce looks for a key whose marker a crash left unwritten.
const recentKeys = 256

// pageReaders bounds the point reads one page sends at once.
const pageReaders = 8

func entryID(list string, seq int64) string { return list + "#" + strconv.FormatInt(seq, 10) }
func headID(list string) string             { return list + "#head" }
func keyID(list, key string) string         { return list + "@" + key }

// Append stores v as the next entry of list and returns its position.
func Append[T any](ctx context.Context, l Log, list string, v T) (int64, error) {
	return l.append(ctx, list, "", v)
}

// AppendOnce appends v under a natural key (an event id), so that a redelivery appends nothing:
// a key already appended to list reports that entry's position and added false.
//
// The key's marker "L@<key>" is claimed (inserted with position 0) before the entry is appended
// and completed after, so a new key costs a few point reads and writes, not a look through the
// list. Only a claim left incomplete (a crash between the writes, or a concurrent call with the
// same key) looks for the key among the newest entries before appending. Two concurrent calls
// with one key may both append; consumers handle one event at a time.
func AppendOnce[T any](ctx context.Context, l Log, list, key string, v T) (seq int64, added bool, err error) {
	var mark logHead
	err = FindOne(ctx, l.coll, ByID(keyID(list, key)), &mark)
	switch {
	case err == nil && mark.Seq > 0:
		return mark.Seq, false, nil
	case err == nil: // an incomplete claim: another call's append under way, or a crash's
		if seq, err = l.settled(ctx, list, key); err != nil || seq > 0 {
			return seq, false, err
		}
		if seq, err = l.findRecent(ctx, list, key); err != nil {
			return 0, false, err
		}
	case errors.Is(err, ErrNotFound):
		claim := Insert(ctx, l.coll, logHead{ID: keyID(list, key)})
		if errors.Is(claim, ErrTaken) {
			return AppendOnce(ctx, l, list, key, v) // claimed meanwhile: read the claim again
		}
		if claim != nil {
			return 0, false, claim
		}
	default:
		return 0, false, err
	}
	added = seq == 0
	if added {
		if seq, err = l.append(ctx, list, key, v); err != nil {
			return 0, false, err
		}
	}
	if _, err := l.coll.UpdateOne(ctx, ByID(keyID(list, key)), bson.D{{Key: "$set", Value: bson.D{{Key: "seq", Value: seq}}}}); err != nil {
		return 0, false, err
	}
	return seq, added, nil
}

// claimWait is how long AppendOnce waits for another call's claim of the same key to complete
// before it takes the claim for one a crash left incomplete.
const claimWait = 2 * time.Second

// settled waits up to claimWait for key's claim to complete and returns its position (0: it
// did not complete).
func (l Log) settled(ctx context.Context, list, key string) (int64, error) {
	for deadline := time.Now().Add(claimWait); time.Now().Before(deadline); {
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(claimWait / 10):
		}
		var mark logHead
		if err := FindOne(ctx, l.coll, ByID(keyID(list, key)), &mark); err != nil {
			return 0, err
		}
		if mark.Seq > 0 {
			return mark.Seq, nil
		}
	}
	return 0, nil
}

// findRecent looks for key among the newest recentKeys entries of list (0 when absent).
func (l Log) findRecent(ctx context.Context, list, key string) (int64, error) {
	n, err := l.Len(ctx, list)
	if err != nil {
		return 0, err
	}
	for seq := n; seq > 0 && seq > n-recentKeys; seq-- {
		var e logDoc[bson.Raw]
		err := FindOne(ctx, l.coll, ByID(entryID(list, seq)), &e)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return 0, err
		}
		if err == nil && e.Key == key {
			return seq, nil
		}
	}
	return 0, nil
}

func (l Log) append(ctx context.Context, list, key string, v any) (int64, error) {
	n, err := l.Len(ctx, list)
	if err != nil {
		return 0, err
	}
	at := time.Now().UTC()
	for seq := n + 1; ; seq++ {
		doc := logDoc[any]{ID: entryID(list, seq), Entry: Entry[any]{Seq: seq, Key: key, At: at, Value: v}}
		err := Insert(ctx, l.coll, doc)
		if errors.Is(err, ErrTaken) {
			continue // another writer took this position: the next one may be free
		}
		if err != nil {
			return 0, err
		}
		l.advance(ctx, list, seq)
		return seq, nil
	}
}

// advance moves the head hint to seq. A failure only leaves the hint behind, which readers step
// over, so it is not reported.
func (l Log) advance(ctx context.Context, list string, seq int64) {
	_, _ = l.coll.UpdateOne(ctx, ByID(headID(list)),
		bson.D{{Key: "$max", Value: bson.D{{Key: "seq", Value: seq}}}},
		options.UpdateOne().SetUpsert(true))
}

// Len is how many entries were ever appended to list.
func (l Log) Len(ctx context.Context, list string) (int64, error) {
	var head logHead
	if err := FindOne(ctx, l.coll, ByID(headID(list)), &head); err != nil && !errors.Is(err, ErrNotFound) {
		return 0, err
	}
	n := head.Seq
	for {
		var probe logHead
		err := FindOne(ctx, l.coll, ByID(entryID(list, n+1)), &probe)
		if errors.Is(err, ErrNotFound) {
			return n, nil
		}
		if err != nil {
			return 0, err
		}
		n++
	}
}

// Get reads entry seq of list; an absent one is ErrNotFound.
func Get[T any](ctx context.Context, l Log, list string, seq int64) (Entry[T], error) {
	var doc logDoc[T]
	if err := FindOne(ctx, l.coll, ByID(entryID(list, seq)), &doc); err != nil {
		return Entry[T]{}, err
	}
	return doc.Entry, nil
}

// Page reads up to limit entries of list, newest first, at positions below before (0: from the
// newest). next is the position to pass for the following page, 0 when no entry is left.
func Page[T any](ctx context.Context, l Log, list string, before int64, limit int) (entries []Entry[T], next int64, err error) {
	top := before - 1
	if before <= 0 {
		if top, err = l.Len(ctx, list); err != nil {
			return nil, 0, err
		}
	}
	if limit < 1 || top < 1 {
		return []Entry[T]{}, 0, nil
	}
	count := min(int64(limit), top)
	entries = make([]Entry[T], count)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(pageReaders)
	for i := range count {
		g.Go(func() error {
			e, err := Get[T](gctx, l, list, top-i)
			if err != nil {
				return fmt.Errorf("log %s entry %d: %w", list, top-i, err)
			}
			entries[i] = e
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, 0, err
	}
	if last := top - count + 1; last > 1 {
		next = last
	}
	return entries, next, nil
}

// PageWhere reads list newest first from position before (0: from the newest), keeping the
// entries keep accepts, until it holds limit of them or has read budget entries, whichever comes
// first. next is the position to resume at (0 once the list is exhausted), so a page whose
// budget ran out comes back short, with a next: a list whose entries were mostly removed (keep
// reads each entry's document and finds it gone) or a filter that matches little still costs at
// most budget point reads per page, never the whole list. keep is called in list order.
func PageWhere[T any](ctx context.Context, l Log, list string, before int64, limit, budget int,
	keep func(context.Context, Entry[T]) (bool, error)) (kept []Entry[T], next int64, err error) {
	taken := 0 // keep is not asked about entries past the page
	return PageWhereBatch(ctx, l, list, before, limit, budget, func(ctx context.Context, entries []Entry[T]) ([]bool, error) {
		verdicts := make([]bool, len(entries))
		for i, e := range entries {
			if taken == limit {
				break
			}
			ok, err := keep(ctx, e)
			if err != nil {
				return nil, err
			}
			if verdicts[i] = ok; ok {
				taken++
			}
		}
		return verdicts, nil
	})
}
