package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// OutboxCollection holds a service's pending events, and only those: an entry is deleted once
// Kafka has acknowledged it, so the relay's cost follows the events in flight, not stored data.
// Each entry (_id: the event id) has a key beside it in the range the sweep reads,
// "~pending|<event time>|<event id>", inserted and deleted with it: the sweep is one _id range
// from the start up to a time, paged, never a filter on a field.
const OutboxCollection = "outbox"

// pendingScope is the scope of the sweep's range; it sorts after every event id.
var pendingScope = mongox.Scope("~pending")

// pendingKey is the key of e in the sweep's range. Its time is the event's own (to the
// millisecond, what a stored time keeps), so that the relay, which holds the event, deletes the
// key with the entry without reading it.
func pendingKey(e Pending) string {
	return pendingScope + mongox.Key(mongox.Time(e.CreatedAt.Truncate(time.Millisecond)), mongox.IDPart(e.ID))
}

// keyTime is the time of a key of the sweep's range.
func keyTime(key string) time.Time {
	part, _, _ := strings.Cut(strings.TrimPrefix(key, pendingScope), mongox.Sep)
	t, _ := mongox.ParseTime(part)
	return t
}

// PendingEvents counts the events staged in db's outbox and not yet acknowledged: its entries, the
// _id range below the sweep's keys (one command, the size of the backlog).
func PendingEvents(ctx context.Context, db *mongo.Database) (int64, error) {
	return db.Collection(OutboxCollection).CountDocuments(ctx, mongox.Range{Before: pendingScope}.Filter())
}

// pendingDoc is an entry's key in the sweep's range.
type pendingDoc struct {
	Key   string `bson:"_id"`
	Event string `bson:"e"`
}

// PublishedCollection keeps published events for OutboxOptions.Retain, when set, so that they
// can be published again after the broker lost them (see Republish).
const PublishedCollection = "outbox_published"

// EventsField is the field of a domain document that lists the ids of the events its write
// produced. The sweep reads it to learn whether the write of a pending event happened.
const EventsField = "_events"

// IDs returns the ids of evs, for a domain document's EventsField.
func IDs(evs ...Pending) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}

// Stager is the outbox as a store sees it: Stage before a write that records event ids, Keep
// before deleting a document that records them. Stores that choose a document's id themselves
// take one, so that they stage under the id they write.
type Stager interface {
	Stage(ctx context.Context, collection string, id any, evs ...Pending) error
	Keep(ctx context.Context, ids ...string) error
}

// Publisher is what the relay needs of a producer.
type Publisher interface {
	Publish(ctx context.Context, evs ...Pending) error
}

// OutboxOptions tunes the relay; zero values take the defaults.
type OutboxOptions struct {
	// SweepInterval is how often pending entries no live writer confirmed are looked at (5 s).
	SweepInterval time.Duration
	// RecoverAfter is the age from which the sweep takes an entry over from its writer (10 s).
	RecoverAfter time.Duration
	// DiscardAfter is the age from which an entry whose write never happened is dropped (5 min).
	DiscardAfter time.Duration
	// Batch bounds the events published and acknowledged together (500).
	Batch int
	// Queue bounds the confirmed events waiting in memory (16384); beyond it the sweep takes them.
	Queue int
	// Retain keeps published events that long in PublishedCollection (0: not at all).
	Retain time.Duration
	// Republish publishes the retained events again when Run starts: the broker lost them.
	Republish bool
}

func (o *OutboxOptions) defaults() {
	o.SweepInterval = orDefault(o.SweepInterval, 5*time.Second)
	o.RecoverAfter = orDefault(o.RecoverAfter, 10*time.Second)
	o.DiscardAfter = orDefault(o.DiscardAfter, 5*time.Minute)
	o.Batch = orDefault(o.Batch, 500)
	o.Queue = orDefault(o.Queue, 16384)
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// entry is a pending event as stored in the outbox collection.
type entry struct {
	ID         string `bson:"_id"`
	Topic      string `bson:"topic"`
	Key        string `bson:"key"`
	Type       string `bson:"type"`
	RequestID  string `bson:"request_id,omitempty"`
	Payload    string `bson:"payload"`
	Collection string `bson:"collection"`
	DocID      any    `bson:"doc_id"`
	// CreatedAt is when the entry was staged; EventAt when the event was made (zero in entries of
	// earlier releases), the time of its key.
	CreatedAt time.Time `bson:"created_at"`
	EventAt   time.Time `bson:"event_at,omitzero"`
	// Confirmed says that the write is known to have happened: set when a first publish failed,
	// so that a later sweep publishes without looking for the document (which may be gone).
	Confirmed bool `bson:"confirmed,omitempty"`
	// PublishedAt is set on a retained copy (PublishedCollection) only.
	PublishedAt time.Time `bson:"published_at,omitzero"`
}

func (e *entry) pending() Pending {
	at := e.EventAt
	if at.IsZero() {
		at = e.CreatedAt
	}
	return Pending{ID: e.ID, Topic: e.Topic, Key: e.Key, Type: e.Type, RequestID: e.RequestID, Payload: e.Payload, CreatedAt: at}
}

// Outbox makes events of acknowledged writes reach Kafka, on a store without transactions.
//
// A write stages its events first (Stage: one insert into the outbox collection), then writes its
// domain document carrying the events' ids (EventsField), then confirms them (Confirm) to the
// in-process relay, which publishes in batches and deletes the acknowledged entries with one
// command. If the writer dies between its write and the publish, or Kafka is down, the entries
// stay; the sweep looks only at the outbox collection, publishes an entry whose domain document
// records its id, and drops one whose document records other ids (another write of it won) or
// is still missing after DiscardAfter (its write never happened). Delivery is at-least-once.
type Outbox struct {
	db   *mongo.Database
	coll *mongo.Collection
	// staging inserts the entries of concurrent writes together.
	staging *mongox.Batcher
	pub     Publisher
	log     *slog.Logger
	opts    OutboxOptions
	queue   chan Pending
	// acks carries published events to the goroutine that deletes them, so that the next batch
	// is published while the last one is acknowledged.
	acks chan []Pending
	// held are the events that the sweep must leave alone, so that an event is published once
	// per outage and not once per path: those queued or being delivered by the relay, and those
	// acknowledged since the sweep last read the outbox (its read may predate their delete).
	mu   sync.Mutex
	held map[string]bool
	// overflow are events confirmed when the queue was full (at most 4 queues of them): the
	// sweep publishes them without reading their documents, since their writes are known.
	overflow map[string]bool
}

// Staging batches hold up to stageBatch entries; a batch's insert times out after stageTimeout.
const (
	stageBatch   = 256
	stageTimeout = 30 * time.Second
)

// NewOutbox returns the outbox of db, publishing through pub.
func NewOutbox(db *mongo.Database, pub Publisher, log *slog.Logger, opts OutboxOptions) *Outbox {
	opts.defaults()
	coll := db.Collection(OutboxCollection)
	return &Outbox{db: db, coll: coll, staging: mongox.NewBatcher(coll, stageBatch, stageTimeout), pub: pub, log: log, opts: opts,
		queue: make(chan Pending, opts.Queue), acks: make(chan []Pending, 64), held: map[string]bool{},
		overflow: map[string]bool{}}
}

// Stage records evs as pending, before the write of document id of collection, which must list
// IDs(evs) in its EventsField. A write must not start when Stage fails.
func (o *Outbox) Stage(ctx context.Context, collection string, id any, evs ...Pending) error {
	if len(evs) == 0 {
		return nil
	}
	docs := make([]any, 0, 2*len(evs))
	for _, e := range evs {
		docs = append(docs, entry{ID: e.ID, Topic: e.Topic, Key: e.Key, Type: e.Type, RequestID: e.RequestID, Payload: e.Payload,
			Collection: collection, DocID: id, CreatedAt: time.Now(), EventAt: e.CreatedAt}, pendingDoc{Key: pendingKey(e), Event: e.ID})
	}
	// A resumed write stages the same events again: those already pending are left as they are.
	// Concurrent writes stage together (a group commit): one insert per batch, not per write.
	if _, err := o.staging.InsertNew(ctx, docs...); err != nil {
		return fmt.Errorf("stage events: %w", err)
	}
	return nil
}

// Confirm hands staged events whose write succeeded to the relay. It never blocks: when the
// queue is full the sweep publishes them.
func (o *Outbox) Confirm(evs ...Pending) {
	for _, e := range evs {
		o.hold(e.ID)
		select {
		case o.queue <- e:
		default:
			o.mu.Lock()
			delete(o.held, e.ID) // not queued: the sweep publishes it, as an overflow
			if len(o.overflow) < 4*o.opts.Queue {
				o.overflow[e.ID] = true
			}
			o.mu.Unlock()
		}
	}
}

// hold marks id as one the sweep leaves alone. The map holds at most the queue, a batch in
// delivery and the acknowledgements since the sweep's last read.
func (o *Outbox) hold(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.held[id] = true
}

// release is called once acknowledged events are deleted: the sweep leaves them alone until its
// next read, which cannot see them any more.
func (o *Outbox) release(evs []Pending) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, e := range evs {
		o.held[e.ID] = false // false: acknowledged, dropped at the sweep's next read
		delete(o.overflow, e.ID)
	}
}

// unhold gives events the relay could not deliver back to the sweep.
func (o *Outbox) unhold(evs []Pending) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, e := range evs {
		delete(o.held, e.ID)
	}
}

func (o *Outbox) isOverflow(id string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.overflow[id]
}

// serveQueue delivers what writers confirmed meanwhile, so that a sweep working through a
// backlog does not hold back the events of new writes.
func (o *Outbox) serveQueue(ctx context.Context) {
	for ctx.Err() == nil {
		select {
		case first := <-o.queue:
			o.deliver(ctx, o.collect(first))
		default:
			return
		}
	}
}

// forgetAcknowledged drops the acknowledged entries of held, before a read of the outbox.
func (o *Outbox) forgetAcknowledged() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for id, queued := range o.held {
		if !queued {
			delete(o.held, id)
		}
	}
}

func (o *Outbox) isHeld(id string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	_, ok := o.held[id]
	return ok
}

// Run relays until ctx ends, then publishes what is queued within a short grace period. It
// waits on its queue and a ticker, so an idle relay costs one query of an empty collection per
// sweep interval.
func (o *Outbox) Run(ctx context.Context) error {
	ticker := time.NewTicker(o.opts.SweepInterval)
	defer ticker.Stop()
	acked := make(chan struct{})
	go func() { defer close(acked); o.acknowledge() }()
	defer func() { o.acks <- nil; <-acked }()
	var prune <-chan time.Time
	if o.opts.Retain > 0 {
		t := time.NewTicker(min(o.opts.Retain, time.Minute))
		defer t.Stop()
		prune = t.C
		if o.opts.Republish {
			o.republish(ctx)
		}
	}
	o.carryOver(ctx)
	started := time.Now()
	carried := started
	o.sweep(ctx)
	for {
		select {
		case <-ctx.Done():
			o.drain()
			return nil
		case first := <-o.queue:
			o.deliver(ctx, o.collect(first))
		case <-ticker.C:
			if time.Since(started) < carryWindow && time.Since(carried) >= carryEvery {
				o.carryOver(ctx)
				carried = time.Now()
			}
			o.sweep(ctx)
		case <-prune:
			o.prune(ctx)
		}
	}
}

// collect takes first and whatever else is queued, up to a batch.
func (o *Outbox) collect(first Pending) []Pending {
	batch := []Pending{first}
	for len(batch) < o.opts.Batch {
		select {
		case next := <-o.queue:
			batch = append(batch, next)
		default:
			return batch
		}
	}
	return batch
}

// deliver publishes a batch, retrying with capped backoff until Kafka takes it or ctx ends.
// After a first failure the entries are marked confirmed, so that they are published even if
// this process stops and their documents are deleted before Kafka is back.
func (o *Outbox) deliver(ctx context.Context, batch []Pending) {
	backoff := 100 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := o.publishOnce(ctx, batch)
		if err == nil {
			o.acks <- batch
			return
		}
		if attempt == 0 {
			o.markConfirmed(ctx, batch)
		}
		if ctx.Err() != nil {
			o.unhold(batch) // left to the sweep of the next Run
			return
		}
		o.log.Warn("outbox publish failed; retrying", "error", err, "events", len(batch), "attempt", attempt+1)
		if !sleep(ctx, backoff) {
			o.unhold(batch)
			return
		}
		// A short cap: the relay is back within a second of the broker, and an attempt of a
		// broker that is down costs one refused connection.
		backoff = min(2*backoff, time.Second)
	}
}

// publishOnce makes one attempt. An attempt under way when the service stops is finished, within
// a bound, rather than cancelled.
func (o *Outbox) publishOnce(ctx context.Context, batch []Pending) error {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return o.pub.Publish(actx, batch...)
}

// drain publishes what is queued at shutdown, once; what fails stays for the sweep.
func (o *Outbox) drain() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		select {
		case first := <-o.queue:
			batch := o.collect(first)
			if err := o.pub.Publish(ctx, batch...); err != nil {
				o.log.Warn("outbox publish at shutdown failed; the sweep will publish", "error", err, "events", len(batch))
				o.markConfirmed(ctx, batch)
				o.unhold(batch)
				continue
			}
			o.acks <- batch
		default:
			return
		}
	}
}

// ackLinger is how long acknowledge waits for more published events before deleting those it
// has: a send's entries are deleted with those of the sends around it, one command for many even
// when the relay publishes them one at a time. An entry lingering that long costs nothing: the
// sweep leaves it alone, and a crash meanwhile only publishes it again, which consumers dedupe.
const ackLinger = 250 * time.Millisecond

// acknowledge deletes published entries (retaining copies when asked), with one command (per
// mongox.MaxIDIn ids) for all that arrive within ackLinger of the first, until it receives nil
// (Run's end).
func (o *Outbox) acknowledge() {
	for evs := range o.acks {
		last := evs == nil
		if !last {
			evs, last = o.gather(evs)
		}
		if len(evs) > 0 {
			o.retain(evs)
			ids := IDs(evs...)
			for _, e := range evs {
				ids = append(ids, pendingKey(e))
			}
			// Up to 4 batches of events and a key of each: mongox.MaxIDIn ids a command.
			if err := mongox.DeleteIn(context.Background(), o.coll, ids); err != nil {
				o.log.Warn("outbox ack failed; events may be published again", "error", err, "events", len(evs))
			}
			o.release(evs)
		}
		if last {
			return
		}
	}
}

// gather adds to evs the published events that arrive within ackLinger, up to 4 batches; it
// returns at once when it receives nil (Run's end), and reports that it did.
func (o *Outbox) gather(evs []Pending) ([]Pending, bool) {
	linger := time.NewTimer(ackLinger)
	defer linger.Stop()
	for len(evs) < 4*o.opts.Batch {
		select {
		case next := <-o.acks:
			if next == nil {
				return evs, true
			}
			evs = append(evs, next...)
		case <-linger.C:
			return evs, false
		}
	}
	return evs, false
}

func (o *Outbox) markConfirmed(ctx context.Context, batch []Pending) {
	if err := o.Keep(context.WithoutCancel(ctx), IDs(batch...)...); err != nil {
		o.log.Warn("outbox: marking events confirmed failed", "error", err, "events", len(batch))
	}
}

// Keep marks the events ids, if still pending, as written: call it before deleting a document
// that records them, so that the sweep publishes them without finding the document.
func (o *Outbox) Keep(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	err := mongox.UpdateIn(ctx, o.coll, ids, bson.D{{Key: "$set", Value: bson.D{{Key: "confirmed", Value: true}}}})
	if err != nil {
		return fmt.Errorf("keep events: %w", err)
	}
	return nil
}

// sweep publishes the pending entries older than RecoverAfter whose write happened, and drops
// those whose write lost to another, or did not happen within DiscardAfter. It pages through
// the keys of the sweep's range up to RecoverAfter ago, so that a backlog left by a long Kafka
// outage drains at publishing speed.
func (o *Outbox) sweep(ctx context.Context) {
	now := time.Now()
	r := mongox.Range{Scope: pendingScope, Before: pendingScope + mongox.Time(now.Add(-o.opts.RecoverAfter)), Limit: o.sweepLimit()}
	for {
		keys, ok := o.sweepPage(ctx, now, r)
		if !ok || len(keys) < r.Limit {
			return
		}
		r.After = keys[len(keys)-1].Key
	}
}

func (o *Outbox) sweepLimit() int { return 4 * o.opts.Batch }

// sweepPage handles one page of the sweep's range: one read of the keys, one of their entries by
// _id per mongox.MaxIDIn keys. It returns the keys, and false when it could not finish.
func (o *Outbox) sweepPage(ctx context.Context, now time.Time, r mongox.Range) ([]pendingDoc, bool) {
	o.forgetAcknowledged()
	keys, err := mongox.Find[pendingDoc](ctx, o.coll, r)
	var entries []entry
	if err == nil && len(keys) > 0 {
		ids := make([]string, len(keys))
		for i, k := range keys {
			ids[i] = k.Event
		}
		entries, err = mongox.FindIn[entry](ctx, o.coll, ids)
	}
	if err != nil {
		if ctx.Err() == nil {
			o.log.Warn("outbox sweep failed", "error", err)
		}
		return nil, false
	}
	byID := make(map[string]*entry, len(entries))
	for i := range entries {
		byID[entries[i].ID] = &entries[i]
	}
	var publish []Pending
	var discard []string
	dropped := 0
	for i, k := range keys {
		if i%50 == 0 {
			o.serveQueue(ctx)
		}
		if o.isHeld(k.Event) {
			continue // the relay has it: published once, by the relay
		}
		e := byID[k.Event]
		switch {
		case e == nil && now.Sub(keyTime(k.Key)) > o.opts.DiscardAfter:
			// A key whose entry is gone (a second key of an event staged twice by concurrent
			// writers); a younger one may be the key of an entry still being inserted.
			discard = append(discard, k.Key)
			continue
		case e == nil:
			continue
		case now.Sub(e.CreatedAt) < o.opts.RecoverAfter:
			continue // staged again lately (a resumed write): its writer may still confirm it
		}
		delete(byID, k.Event) // an event with two keys is handled once
		state := written
		if !e.Confirmed && !o.isOverflow(e.ID) {
			if state, err = o.writeState(ctx, e); err != nil {
				o.log.Warn("outbox sweep: reading a document failed", "collection", e.Collection, "error", err)
				return nil, false
			}
		}
		switch {
		case state == written:
			p := e.pending()
			publish = append(publish, p)
			if pendingKey(p) != k.Key {
				discard = append(discard, k.Key)
			}
		case state == lost, now.Sub(e.CreatedAt) > o.opts.DiscardAfter:
			discard = append(discard, e.ID, k.Key)
			dropped++
		}
	}
	for batch := range slices.Chunk(publish, o.opts.Batch) {
		if err := o.pub.Publish(ctx, batch...); err != nil {
			o.log.Warn("outbox sweep: publish failed; retrying at the next sweep", "error", err, "events", len(batch))
			o.markConfirmed(ctx, batch)
			return nil, false
		}
		for _, e := range batch {
			o.hold(e.ID) // until its delete: the next sweep may read before it
		}
		o.acks <- batch
	}
	if dropped > 0 {
		o.log.Info("outbox sweep: dropping events whose write never happened", "events", dropped)
	}
	if len(discard) > 0 {
		if err := mongox.DeleteIn(ctx, o.coll, discard); err != nil {
			o.log.Warn("outbox sweep: dropping events failed", "error", err)
		}
	}
	return keys, true
}

// Entries staged by an earlier release have no key in the sweep's range. They are given one when
// the relay starts, and every carryEvery for carryWindow after (a rolling upgrade runs older
// replicas beside this one, and those stage entries without keys).
const (
	carryWindow = time.Hour
	carryEvery  = time.Minute
)

// carryOver gives a key to each entry of an earlier release: it reads the entries (an _id range
// below the keys: pending events only) in pages and inserts the keys they lack.
func (o *Outbox) carryOver(ctx context.Context) {
	r := mongox.Range{Before: pendingScope, Limit: 1000}
	for {
		entries, err := mongox.Find[entry](ctx, o.coll, r)
		if err != nil {
			if ctx.Err() == nil {
				o.log.Warn("outbox: carrying entries of an earlier release over failed", "error", err)
			}
			return
		}
		var keys []pendingDoc
		for i := range entries {
			if entries[i].EventAt.IsZero() {
				keys = append(keys, pendingDoc{Key: pendingKey(entries[i].pending()), Event: entries[i].ID})
			}
		}
		if _, err := mongox.InsertNew(ctx, o.coll, keys); err != nil {
			o.log.Warn("outbox: carrying entries of an earlier release over failed", "error", err)
			return
		}
		if len(entries) < r.Limit {
			return
		}
		r.After = entries[len(entries)-1].ID
	}
}

// writeState is what a point read of an entry's domain document tells of its write.
type writeState int

const (
	// notYet: no document; the write may still be under way, or it failed.
	notYet writeState = iota
	// written: the document records the event.
	written
	// lost: the document exists without the event. Documents that record event ids are inserted
	// once, so another write of it won (a retried or concurrent one) and this one never will.
	lost
)

func (o *Outbox) writeState(ctx context.Context, e *entry) (writeState, error) {
	var doc struct {
		Events []string `bson:"_events"`
	}
	err := o.db.Collection(e.Collection).FindOne(ctx, bson.D{{Key: "_id", Value: e.DocID}},
		options.FindOne().SetProjection(bson.D{{Key: EventsField, Value: 1}})).Decode(&doc)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return notYet, nil
	case err != nil:
		return notYet, err
	case slices.Contains(doc.Events, e.ID):
		return written, nil
	}
	return lost, nil
}

// OutboxIndexes create the collections, and the index MongoDB needs for the pruning of retained
// events (prune deletes those published before the retention by published_at). The outbox is
// read by _id ranges only (pending entries, the sweep), and declared with no index of its own.
var OutboxIndexes = []mongox.Index{
	{Collection: OutboxCollection, Keys: bson.D{{Key: "_id", Value: 1}}},
	{Collection: PublishedCollection, Keys: bson.D{{Key: "published_at", Value: 1}}},
}

// retain copies published events into PublishedCollection, when Retain asks for it. A failure
// only narrows what a republish could recover: it is logged, and the ack goes on.
func (o *Outbox) retain(evs []Pending) {
	if o.opts.Retain <= 0 {
		return
	}
	now := time.Now()
	docs := make([]any, len(evs))
	for i, e := range evs {
		docs[i] = entry{ID: e.ID, Topic: e.Topic, Key: e.Key, Type: e.Type, RequestID: e.RequestID, Payload: e.Payload,
			CreatedAt: e.CreatedAt, PublishedAt: now}
	}
	_, err := o.db.Collection(PublishedCollection).InsertMany(context.Background(), docs, options.InsertMany().SetOrdered(false))
	if err != nil && !mongox.IsDuplicateKey(err) {
		o.log.Warn("outbox: retaining published events failed", "error", err, "events", len(evs))
	}
}

// prune deletes the retained events older than Retain.
func (o *Outbox) prune(ctx context.Context) {
	_, err := o.db.Collection(PublishedCollection).DeleteMany(ctx,
		bson.D{{Key: "published_at", Value: bson.D{{Key: "$lt", Value: time.Now().Add(-o.opts.Retain)}}}})
	if err != nil && ctx.Err() == nil {
		o.log.Warn("outbox: pruning retained events failed", "error", err)
	}
}

// republish publishes every retained event again, oldest first, page by page: the broker lost
// what it held, and consumers, which dedupe by event id, take what they had not handled. It
// retries until the broker takes a page or ctx ends.
func (o *Outbox) republish(ctx context.Context) {
	coll := o.db.Collection(PublishedCollection)
	filter := bson.D{}
	total := 0
	for ctx.Err() == nil {
		entries, err := mongox.FindAll[entry](ctx, coll, filter, options.Find().
			SetSort(bson.D{{Key: "created_at", Value: 1}, {Key: "_id", Value: 1}}).SetLimit(int64(o.sweepLimit())))
		if err != nil {
			o.log.Warn("outbox republish: reading retained events failed; retrying", "error", err)
			if !sleep(ctx, time.Second) {
				return
			}
			continue
		}
		evs := make([]Pending, len(entries))
		for i := range entries {
			evs[i] = entries[i].pending()
		}
		for batch := range slices.Chunk(evs, o.opts.Batch) {
			for err := o.publishOnce(ctx, batch); err != nil; err = o.publishOnce(ctx, batch) {
				o.log.Warn("outbox republish failed; retrying", "error", err, "events", len(batch))
				if !sleep(ctx, time.Second) {
					return
				}
			}
		}
		total += len(entries)
		if len(entries) < o.sweepLimit() {
			o.log.Warn("outbox: published the retained events again, since the broker lost its data", "events", total)
			return
		}
		last := entries[len(entries)-1]
		filter = bson.D{{Key: "$or", Value: bson.A{
			bson.D{{Key: "created_at", Value: bson.D{{Key: "$gt", Value: last.CreatedAt}}}},
			bson.D{{Key: "created_at", Value: last.CreatedAt}, {Key: "_id", Value: bson.D{{Key: "$gt", Value: last.ID}}}},
		}}}
	}
}
