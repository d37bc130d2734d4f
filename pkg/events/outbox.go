package events

import (
	"context"
	"log/slog"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Publisher is what the relay needs of a producer.
type Publisher interface {
	Publish(ctx context.Context, evs ...Pending) error
}

// Relay moves pending events from documents' outboxes to Kafka. A write that returned 2xx has its
// events in the document it wrote; the relay publishes them at once when told (Enqueue) and sweeps
// every outbox collection on a schedule, so that events written while Kafka was down, or by a
// replica that died, still go out. Delivery is at-least-once.
type Relay struct {
	db          *mongo.Database
	collections []string
	pub         Publisher
	log         *slog.Logger
	queue       chan ref
	interval    time.Duration
}

type ref struct {
	collection string
	id         any
	events     []Pending
	// stored holds the outbox entries exactly as stored, when read back by the sweep.
	stored []bson.Raw
}

// NewRelay returns a relay over the outboxes of the named collections.
func NewRelay(db *mongo.Database, pub Publisher, log *slog.Logger, collections ...string) *Relay {
	return &Relay{db: db, collections: collections, pub: pub, log: log,
		queue: make(chan ref, 4096), interval: 2 * time.Second}
}

// Enqueue asks the relay to publish the events just written to document id of collection. It
// never blocks: if the queue is full, the sweep picks the events up.
func (r *Relay) Enqueue(collection string, id any, evs ...Pending) {
	if len(evs) == 0 {
		return
	}
	select {
	case r.queue <- ref{collection: collection, id: id, events: evs}:
	default:
	}
}

// Run relays until ctx ends, then drains what is queued with a short grace period.
func (r *Relay) Run(ctx context.Context) error {
	ticker := time.NewTicker(r.interval)
	defer ticker.Stop()
	r.sweep(ctx)
	for {
		select {
		case <-ctx.Done():
			r.drain()
			return nil
		case first := <-r.queue:
			batch := []ref{first}
			for len(batch) < 256 {
				select {
				case next := <-r.queue:
					batch = append(batch, next)
					continue
				default:
				}
				break
			}
			r.publish(ctx, batch)
		case <-ticker.C:
			r.sweep(ctx)
		}
	}
}

func (r *Relay) drain() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		select {
		case next := <-r.queue:
			r.publish(ctx, []ref{next})
		default:
			return
		}
	}
}

func (r *Relay) publish(ctx context.Context, batch []ref) {
	var all []Pending
	for _, b := range batch {
		all = append(all, b.events...)
	}
	if err := r.pub.Publish(ctx, all...); err != nil {
		r.log.Warn("outbox publish failed; the sweep will retry", "error", err, "events", len(all))
		return
	}
	for _, b := range batch {
		r.ack(ctx, b)
	}
}

// ack removes published events from the document's outbox. It uses $pullAll with the exact
// entries (FerretDB ignores $pull with a condition), so an event added meanwhile stays pending.
func (r *Relay) ack(ctx context.Context, b ref) {
	values := make(bson.A, 0, len(b.events))
	if b.stored != nil {
		for _, raw := range b.stored {
			values = append(values, raw)
		}
	} else {
		for _, e := range b.events {
			values = append(values, e)
		}
	}
	_, err := r.db.Collection(b.collection).UpdateOne(ctx, bson.D{{Key: "_id", Value: b.id}},
		bson.D{{Key: "$pullAll", Value: bson.D{{Key: OutboxField, Value: values}}}})
	if err != nil {
		r.log.Warn("outbox ack failed; events may be published again", "collection", b.collection, "error", err)
	}
}

// sweep publishes whatever is still pending in any outbox, oldest documents first.
func (r *Relay) sweep(ctx context.Context) {
	for _, coll := range r.collections {
		filter := bson.D{{Key: OutboxField + ".0", Value: bson.D{{Key: "$exists", Value: true}}}}
		cur, err := r.db.Collection(coll).Find(ctx, filter,
			options.Find().SetLimit(200).SetProjection(bson.D{{Key: OutboxField, Value: 1}}))
		if err != nil {
			if ctx.Err() == nil {
				r.log.Warn("outbox sweep failed", "collection", coll, "error", err)
			}
			continue
		}
		var docs []struct {
			ID     any        `bson:"_id"`
			Outbox []bson.Raw `bson:"_outbox"`
		}
		if err := cur.All(ctx, &docs); err != nil {
			continue
		}
		for _, d := range docs {
			b := ref{collection: coll, id: d.ID, stored: d.Outbox}
			for _, raw := range d.Outbox {
				var p Pending
				if err := bson.Unmarshal(raw, &p); err == nil {
					b.events = append(b.events, p)
				}
			}
			r.publish(ctx, []ref{b})
		}
	}
}

// OutboxIndex is the sparse index that keeps the sweep cheap on MongoDB.
func OutboxIndex(collection string) (string, bson.D) {
	return collection, bson.D{{Key: OutboxField + ".id", Value: 1}}
}
