package mongox

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
// position n, so two writers never share a position. A writer inserts at n only when it knows
// n-1 is taken (it took it, saw it, or another insert of n-1 failed as taken), and entries are
// never removed, so no position is skipped: the list's length is the first free position less
// one.
//
// Each Log remembers the last position it knows of each recently used list (a bounded LRU), so
// an append by a process that appended to the list lately is one insert at the next position;
// when another writer took that position, the append steps forward. "L#head" is a hint of L's
// length, written only every headEvery positions and by an append that did not know the list
// (so that a process new to the list starts near its end): a reader steps forward from it with
// one point read and, on a busy list, one parallel batch of headEvery more; a reader that knows
// the list checks the position after the one it knows with one read. "L@<key>" records where a natural key was
// appended (see AppendOnce).
type Log struct {
	coll *mongo.Collection
	last *lastSeen
}

// NewLog returns the lists kept in coll. Keep one Log per collection and process: its memory of
// the lists' ends is what makes appends and lengths cheap.
func NewLog(coll *mongo.Collection) Log { return Log{coll: coll, last: newLastSeen(rememberedLists)} }

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

// logMark is a key's marker: Seq is where the key was appended, 0 while that is not written
// down; Try is the position its append tried first (0 in markers of earlier releases), where the
// entry almost always is, so that the marker need not be rewritten after a first try that worked.
type logMark struct {
	ID  string `bson:"_id"`
	Seq int64  `bson:"seq"`
	Try int64  `bson:"try,omitempty"`
}

// recentKeys is how far back AppendOnce looks for a key whose marker a crash left unwritten.
const recentKeys = 256

// pageReaders bounds the point reads one page sends at once.
const pageReaders = 8

// headEvery is how many positions the head hint may lag behind a list's end when no writer
// failed, and the size of the batch of point reads a reader sends at once to find the end.
const headEvery = 8

// rememberedLists bounds how many lists' ends one Log remembers.
const rememberedLists = 8192

func entryID(list string, seq int64) string { return list + "#" + strconv.FormatInt(seq, 10) }
func headID(list string) string             { return list + "#head" }
func keyID(list, key string) string         { return list + "@" + key }

// Append stores v as the next entry of list and returns its position.
func Append[T any](ctx context.Context, l Log, list string, v T) (int64, error) {
	seq, known, err := l.next(ctx, list)
	if err != nil {
		return 0, err
	}
	return l.insertFrom(ctx, list, "", v, seq, known)
}

// AppendOnce appends v under a natural key (an event id), so that a redelivery appends nothing:
// a key already appended to list reports that entry's position and added false.
//
// The key's marker "L@<key>" is claimed by inserting it (seq 0, try: the position about to be
// tried) before the entry is appended, so a new key costs two inserts when the Log knows the
// list's end: the marker and the entry. The marker is rewritten with the entry's position only
// when the entry did not land where it said it would try. A redelivery reads the marker and, at
// most, the entry it points to. Only a claim whose entry is found nowhere (a crash between the
// writes, or a concurrent call with the same key still under way) waits for it and then looks
// for the key among the newest entries before appending. Two concurrent calls with one key may
// both append; consumers handle one event at a time.
func AppendOnce[T any](ctx context.Context, l Log, list, key string, v T) (seq int64, added bool, err error) {
	try, known, err := l.next(ctx, list)
	if err != nil {
		return 0, false, err
	}
	claim := Insert(ctx, l.coll, logMark{ID: keyID(list, key), Try: try})
	if claim == nil {
		if seq, err = l.insertFrom(ctx, list, key, v, try, known); err != nil {
			return 0, false, err
		}
		if seq != try {
			if err := l.mark(ctx, list, key, seq); err != nil {
				return 0, false, err
			}
		}
		return seq, true, nil
	}
	if !errors.Is(claim, ErrTaken) {
		return 0, false, claim
	}
	var mark logMark
	err = FindOne(ctx, l.coll, ByID(keyID(list, key)), &mark)
	if errors.Is(err, ErrNotFound) {
		return AppendOnce(ctx, l, list, key, v) // the claim went away meanwhile: claim again
	}
	if err != nil {
		return 0, false, err
	}
	if seq, err = l.landed(ctx, list, key, mark); err != nil || seq > 0 {
		return seq, false, err
	}
	// An incomplete claim: another call's append under way, or a crash's.
	if seq, err = l.settled(ctx, list, key); err != nil || seq > 0 {
		return seq, false, err
	}
	if seq, err = l.findRecent(ctx, list, key); err != nil {
		return 0, false, err
	}
	added = seq == 0
	if added {
		next, known, err := l.next(ctx, list)
		if err != nil {
			return 0, false, err
		}
		if seq, err = l.insertFrom(ctx, list, key, v, next, known); err != nil {
			return 0, false, err
		}
	}
	if err := l.mark(ctx, list, key, seq); err != nil {
		return 0, false, err
	}
	return seq, added, nil
}

// mark writes down where key was appended.
func (l Log) mark(ctx context.Context, list, key string, seq int64) error {
	if _, err := l.coll.UpdateOne(ctx, ByID(keyID(list, key)), bson.D{{Key: "$set", Value: bson.D{{Key: "seq", Value: seq}}}}); err != nil {
		return fmt.Errorf("log %s mark %s: %w", list, key, err)
	}
	return nil
}

// logKey is the key of an entry, read without its value (which may be of any BSON type).
type logKey struct {
	Key string `bson:"key"`
}

var keyOnly = options.FindOne().SetProjection(bson.D{{Key: "key", Value: 1}})

// landed is where a marker says its key was appended: its seq, or its try when the entry there
// has the key (0: neither).
func (l Log) landed(ctx context.Context, list, key string, mark logMark) (int64, error) {
	if mark.Seq > 0 {
		return mark.Seq, nil
	}
	if mark.Try == 0 {
		return 0, nil
	}
	var e logKey
	err := FindOne(ctx, l.coll, ByID(entryID(list, mark.Try)), &e, keyOnly)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return 0, err
	}
	if err == nil && e.Key == key {
		return mark.Try, nil
	}
	return 0, nil
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
		var mark logMark
		if err := FindOne(ctx, l.coll, ByID(keyID(list, key)), &mark); err != nil {
			return 0, err
		}
		if seq, err := l.landed(ctx, list, key, mark); err != nil || seq > 0 {
			return seq, err
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
		var e logKey
		err := FindOne(ctx, l.coll, ByID(entryID(list, seq)), &e, keyOnly)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return 0, err
		}
		if err == nil && e.Key == key {
			return seq, nil
		}
	}
	return 0, nil
}

// next is the position an append to list tries first: after the last one this Log knows of
// (known), else after the list's length.
func (l Log) next(ctx context.Context, list string) (seq int64, known bool, err error) {
	if last, ok := l.last.get(list); ok {
		return last + 1, true, nil
	}
	n, err := l.Len(ctx, list)
	if err != nil {
		return 0, false, err
	}
	return n + 1, false, nil
}

// insertFrom inserts the entry at seq or, when another writer took it, at the next free
// position. A first collision of an append that knew the list steps past what this Log learnt
// meanwhile (another call of this process); a further one reads the list's length. The head
// hint is moved every headEvery positions, and by an append that had to find the list's end.
func (l Log) insertFrom(ctx context.Context, list, key string, v any, seq int64, known bool) (int64, error) {
	at := time.Now().UTC()
	for collided := false; ; collided = true {
		doc := logDoc[any]{ID: entryID(list, seq), Entry: Entry[any]{Seq: seq, Key: key, At: at, Value: v}}
		err := Insert(ctx, l.coll, doc)
		if err == nil {
			l.last.raise(list, seq)
			if !known || seq%headEvery == 0 {
				l.advance(ctx, list, seq)
			}
			return seq, nil
		}
		if !errors.Is(err, ErrTaken) {
			return 0, err
		}
		l.last.raise(list, seq) // taken, by someone
		if known && !collided {
			last, _ := l.last.get(list)
			seq = max(seq, last) + 1
			continue
		}
		n, err := l.Len(ctx, list)
		if err != nil {
			return 0, err
		}
		seq, known = max(seq, n)+1, false
	}
}

// advance moves the head hint to seq. A failure only leaves the hint behind, which readers step
// over, so it is not reported.
func (l Log) advance(ctx context.Context, list string, seq int64) {
	_ = Upsert(ctx, l.coll, headID(list), bson.D{{Key: "$max", Value: bson.D{{Key: "seq", Value: seq}}}})
}

// Len is how many entries were ever appended to list. When this Log knows a position of the
// list, one point read tells whether the list ended there; otherwise Len reads the head hint,
// the position after it and, when that is taken, the headEvery positions after that in one
// parallel batch (more batches only when a writer failed to move the hint).
func (l Log) Len(ctx context.Context, list string) (int64, error) {
	known, ok := l.last.get(list)
	if ok {
		taken, err := l.taken(ctx, list, known+1)
		if err != nil || !taken {
			return known, err
		}
		known++
	}
	var head logHead
	if err := FindOne(ctx, l.coll, ByID(headID(list)), &head); err != nil && !errors.Is(err, ErrNotFound) {
		return 0, err
	}
	n := max(known, head.Seq)
	// One read first: most lists are short or quiet, and end at their hint (the lists of one
	// source's pulls, a day's counters); a busy one is read on in a batch.
	batch := int64(1)
	for {
		taken := make([]bool, batch)
		g, gctx := errgroup.WithContext(ctx)
		for i := range batch {
			g.Go(func() (err error) {
				taken[i], err = l.taken(gctx, list, n+1+i)
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return 0, err
		}
		free := slices.Index(taken, false)
		if free >= 0 {
			n += int64(free)
			l.last.raise(list, n)
			return n, nil
		}
		n += batch
		batch = headEvery
	}
}

// taken reports whether position seq of list holds an entry.
func (l Log) taken(ctx context.Context, list string, seq int64) (bool, error) {
	var probe logHead
	err := FindOne(ctx, l.coll, ByID(entryID(list, seq)), &probe, options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("log %s entry %d: %w", list, seq, err)
	}
	return true, nil
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
