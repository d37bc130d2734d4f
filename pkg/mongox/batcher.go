package mongox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Batcher inserts the documents of many concurrent writers into one collection in shared
// commands (a group commit): a write that finds fewer than two batches in flight starts one at
// once, and the writes that arrive while batches are in flight go together in the next. An idle
// collection adds no wait; a busy one costs one unordered insertMany, one transaction on
// FerretDB, per batch instead of one per write. Each write learns which of its own documents got
// in, as with InsertNew.
type Batcher struct {
	coll    *mongo.Collection
	max     int
	timeout time.Duration

	mu       sync.Mutex
	queue    []*batchWrite
	inFlight int
}

// batchWrite is one writer's documents and where its outcome goes.
type batchWrite struct {
	ctx      context.Context
	docs     []any
	inserted []bool
	err      error
	done     chan struct{}
}

// maxInFlight is how many batches of one collection run at once.
const maxInFlight = 2

// NewBatcher returns a batcher of coll whose batches hold up to max documents (a larger write
// goes alone) and whose commands time out after timeout.
func NewBatcher(coll *mongo.Collection, max int, timeout time.Duration) *Batcher {
	return &Batcher{coll: coll, max: max, timeout: timeout}
}

// InsertNew inserts docs with the next batch and reports which of them got in: a document whose
// _id (or unique key) exists is left out. Any other failure of one of its documents is an error.
// The caller's ctx bounds only its wait: a batch is shared, so it runs to its own timeout. The
// batch's command carries the values of its first writer's context (a request id, for the
// command monitors that count a request's commands), so each command is counted once.
func (b *Batcher) InsertNew(ctx context.Context, docs ...any) ([]bool, error) {
	w := &batchWrite{ctx: ctx, docs: docs, done: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, w)
	var batch []*batchWrite
	if b.inFlight < maxInFlight {
		batch = b.take()
		b.inFlight++
	}
	b.mu.Unlock()
	if batch != nil {
		go b.run(batch)
	}
	select {
	case <-w.done:
		return w.inserted, w.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// take removes the next batch from the queue; b.mu is held.
func (b *Batcher) take() []*batchWrite {
	n, size := 0, 0
	for n < len(b.queue) && (n == 0 || size+len(b.queue[n].docs) <= b.max) {
		size += len(b.queue[n].docs)
		n++
	}
	batch := b.queue[:n:n]
	b.queue = b.queue[n:]
	return batch
}

// run inserts batches until the queue is empty.
func (b *Batcher) run(batch []*batchWrite) {
	for {
		b.insert(batch)
		b.mu.Lock()
		if len(b.queue) == 0 {
			b.inFlight--
			b.mu.Unlock()
			return
		}
		batch = b.take()
		b.mu.Unlock()
	}
}

// insert writes one batch and hands each writer its outcome.
func (b *Batcher) insert(batch []*batchWrite) {
	var docs []any
	for _, w := range batch {
		docs = append(docs, w.docs...)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(batch[0].ctx), b.timeout)
	defer cancel()
	_, err := b.coll.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	failed := map[int]error{}
	var bwe mongo.BulkWriteException
	switch {
	case err == nil:
	case errors.As(err, &bwe) && bwe.WriteConcernError == nil && len(bwe.WriteErrors) > 0:
		for _, we := range bwe.WriteErrors {
			if IsDuplicateKey(we) || we.Code == 11000 {
				failed[we.Index] = ErrTaken
			} else {
				failed[we.Index] = fmt.Errorf("insert into %s: %w", b.coll.Name(), we)
			}
		}
	default:
		err = fmt.Errorf("insert into %s: %w", b.coll.Name(), err)
		for _, w := range batch {
			w.err = err
			close(w.done)
		}
		return
	}
	i := 0
	for _, w := range batch {
		w.inserted = make([]bool, len(w.docs))
		for j := range w.docs {
			switch e := failed[i]; {
			case e == nil:
				w.inserted[j] = true
			case !errors.Is(e, ErrTaken) && w.err == nil:
				w.err = e
			}
			i++
		}
		if w.err != nil {
			w.inserted = nil
		}
		close(w.done)
	}
}
