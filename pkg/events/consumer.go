package events

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// Handler handles one event. It must be idempotent: delivery is at-least-once, and the consumer
// only dedupes events it has recorded as handled.
type Handler func(ctx context.Context, ev Event) error

// ConsumerConfig configures a consumer-group runner.
type ConsumerConfig struct {
	Brokers []string
	Prefix  string
	GroupID string
	Topics  []string
	// Processed records handled event ids (with an expiry swept by the consumer), for dedupe.
	Processed *mongo.Collection
	Handler   Handler
	Log       *slog.Logger
	// DedupeFor is how long a handled id is remembered (default 7 days).
	DedupeFor time.Duration
}

// Consume runs the consumer group until ctx ends. Each message is handled, recorded as processed,
// and only then committed; a handler error is retried with backoff before the event is given up
// with an error log, so that one poison event cannot stall a partition forever.
func Consume(ctx context.Context, cfg ConsumerConfig) error {
	if cfg.DedupeFor == 0 {
		cfg.DedupeFor = 7 * 24 * time.Hour
	}
	topics := make([]string, len(cfg.Topics))
	for i, t := range cfg.Topics {
		topics[i] = cfg.Prefix + t
	}
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers:           cfg.Brokers,
		GroupID:           cfg.Prefix + cfg.GroupID,
		GroupTopics:       topics,
		StartOffset:       kafka.FirstOffset,
		MinBytes:          1,
		MaxBytes:          10 << 20,
		MaxWait:           200 * time.Millisecond,
		ReadBatchTimeout:  200 * time.Millisecond,
		HeartbeatInterval: 500 * time.Millisecond,
		SessionTimeout:    6 * time.Second,
		RebalanceTimeout:  6 * time.Second,
		JoinGroupBackoff:  250 * time.Millisecond,
		CommitInterval:    0, // synchronous commits, after handling
	})
	defer r.Close()
	sweepDone := make(chan struct{})
	go func() { defer close(sweepDone); sweepProcessed(ctx, cfg.Processed, cfg.Log) }()
	defer func() { <-sweepDone }()
	for {
		msg, err := r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			cfg.Log.Warn("kafka fetch failed", "error", err)
			if !sleep(ctx, time.Second) {
				return nil
			}
			continue
		}
		handleOne(ctx, cfg, msg)
		if err := r.CommitMessages(context.WithoutCancel(ctx), msg); err != nil {
			cfg.Log.Warn("kafka commit failed; the event may be handled again", "error", err)
		}
	}
}

func handleOne(ctx context.Context, cfg ConsumerConfig, msg kafka.Message) {
	var ev Event
	if err := json.Unmarshal(msg.Value, &ev); err != nil || ev.ID == "" {
		cfg.Log.Error("dropping malformed event", "topic", msg.Topic, "offset", msg.Offset)
		return
	}
	seen, err := cfg.Processed.CountDocuments(ctx, bson.D{{Key: "_id", Value: ev.ID}})
	if err == nil && seen > 0 {
		return
	}
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err = cfg.Handler(ctx, ev)
		if err == nil {
			break
		}
		if attempt == 8 || ctx.Err() != nil {
			cfg.Log.Error("giving up on event", "event_id", ev.ID, "type", ev.Type, "error", err)
			return
		}
		cfg.Log.Warn("event handler failed; retrying", "event_id", ev.ID, "type", ev.Type, "attempt", attempt, "error", err)
		if !sleep(ctx, backoff) {
			return
		}
		backoff *= 2
	}
	_, err = cfg.Processed.InsertOne(context.WithoutCancel(ctx), bson.D{
		{Key: "_id", Value: ev.ID}, {Key: "type", Value: ev.Type},
		{Key: "expires_at", Value: time.Now().Add(cfg.DedupeFor)},
	})
	if err != nil && !mongox.IsDuplicateKey(err) {
		cfg.Log.Warn("recording processed event failed", "event_id", ev.ID, "error", err)
	}
}

// sweepProcessed deletes expired dedupe records (FerretDB has no TTL indexes).
func sweepProcessed(ctx context.Context, coll *mongo.Collection, log *slog.Logger) {
	for sleep(ctx, 10*time.Minute) {
		_, err := coll.DeleteMany(ctx, bson.D{{Key: "expires_at", Value: bson.D{{Key: "$lt", Value: time.Now()}}}},
			options.DeleteMany())
		if err != nil && !errors.Is(err, context.Canceled) {
			log.Warn("sweeping processed events failed", "error", err)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
