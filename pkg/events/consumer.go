package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// Handler handles one event. It must be idempotent: delivery is at-least-once. It returns nil
// when the event is done (including when what it refers to no longer exists), an error to have
// it retried, or Permanent(err) when retrying cannot help.
type Handler func(ctx context.Context, ev Event) error

// permanentError marks a handler error that retrying cannot fix.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// Permanent marks err as one that retrying cannot fix: the event goes to the dead letters at once.
func Permanent(err error) error { return permanentError{err} }

// IsPermanent reports whether err was marked by Permanent.
func IsPermanent(err error) bool { return errors.As(err, new(permanentError)) }

// ConsumerConfig configures a consumer-group runner.
type ConsumerConfig struct {
	Brokers []string
	Prefix  string
	GroupID string
	Topics  []string
	// Processed records handled event ids (with an expiry swept by the consumer), for dedupe.
	// Nil when the handler is idempotent by its own writes (each one an insert keyed by the
	// event): no record is then read or written.
	Processed *mongo.Collection
	// Dead receives the events that could not be handled (see DeadLetters).
	Dead    *mongo.Collection
	Handler Handler
	Log     *slog.Logger
	// DedupeFor is how long a handled id is remembered (default 7 days).
	DedupeFor time.Duration
	// RetryMin and RetryMax bound the backoff between attempts (200 ms, 30 s); RetryFor is how
	// long a failing event is retried before it is dead-lettered (1 h).
	RetryMin, RetryMax, RetryFor time.Duration
}

// Consume runs the consumer group until ctx ends. Every assigned partition has its own worker,
// so a failing event holds back only the events after it in its partition (the same object's,
// whose order matters), never the other partitions. A worker commits an offset only once its
// event is handled or dead-lettered; an event interrupted by shutdown is delivered again.
func Consume(ctx context.Context, cfg ConsumerConfig) error {
	cfg.DedupeFor = orDefault(cfg.DedupeFor, 7*24*time.Hour)
	cfg.RetryMin = orDefault(cfg.RetryMin, 200*time.Millisecond)
	cfg.RetryMax = orDefault(cfg.RetryMax, 30*time.Second)
	cfg.RetryFor = orDefault(cfg.RetryFor, time.Hour)
	topics := make([]string, len(cfg.Topics))
	for i, t := range cfg.Topics {
		topics[i] = cfg.Prefix + t
	}
	group, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID:                     cfg.Prefix + cfg.GroupID,
		Brokers:                cfg.Brokers,
		Topics:                 topics,
		StartOffset:            kafka.FirstOffset,
		HeartbeatInterval:      500 * time.Millisecond,
		SessionTimeout:         6 * time.Second,
		RebalanceTimeout:       6 * time.Second,
		JoinGroupBackoff:       250 * time.Millisecond,
		WatchPartitionChanges:  true,
		PartitionWatchInterval: 2 * time.Second,
	})
	if err != nil {
		return fmt.Errorf("consumer group %s: %w", cfg.GroupID, err)
	}
	sweepDone := make(chan struct{})
	go func() {
		defer close(sweepDone)
		if cfg.Processed != nil {
			sweepProcessed(ctx, cfg.Processed, cfg.Log)
		}
	}()
	defer func() { <-sweepDone }()
	// Closing the group ends the generation, which cancels the workers' contexts and waits for them.
	defer group.Close()
	c := &consumer{cfg: cfg}
	for {
		gen, err := group.Next(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, kafka.ErrGroupClosed) {
				return nil
			}
			cfg.Log.Warn("kafka: joining the consumer group failed", "group", cfg.GroupID, "error", err)
			if !sleep(ctx, time.Second) {
				return nil
			}
			continue
		}
		for topic, parts := range gen.Assignments {
			for _, p := range parts {
				gen.Start(func(gctx context.Context) { c.partition(gctx, gen, topic, p) })
			}
		}
	}
}

type consumer struct{ cfg ConsumerConfig }

// partition reads one partition from its committed offset until the generation ends.
func (c *consumer) partition(ctx context.Context, gen *kafka.Generation, topic string, p kafka.PartitionAssignment) {
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: c.cfg.Brokers, Topic: topic, Partition: p.ID,
		MinBytes: 1, MaxBytes: 10 << 20, MaxWait: time.Second,
	})
	defer r.Close()
	if err := r.SetOffset(p.Offset); err != nil {
		c.cfg.Log.Warn("kafka: setting the partition offset failed", "topic", topic, "partition", p.ID, "error", err)
	}
	commits := c.committer(gen, topic, p.ID)
	defer commits.stop()
	for {
		msg, err := r.FetchMessage(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			c.cfg.Log.Warn("kafka fetch failed", "topic", topic, "partition", p.ID, "error", err)
			if !sleep(ctx, time.Second) {
				return
			}
			continue
		}
		if !c.handle(ctx, msg) {
			return // interrupted: not committed, so delivered again
		}
		commits.handled(msg.Offset + 1)
	}
}

// committer commits a partition's offsets beside its worker, so that the next event is handled
// while the last one is committed. Only the newest handled offset waiting is committed, so a
// burst costs a few commits, not one per event. Offsets only ever move past handled events.
type committer struct {
	next chan int64
	done chan struct{}
}

func (c *consumer) committer(gen *kafka.Generation, topic string, partition int) *committer {
	cm := &committer{next: make(chan int64, 1), done: make(chan struct{})}
	go func() {
		defer close(cm.done)
		for offset := range cm.next {
			if err := gen.CommitOffsets(map[string]map[int]int64{topic: {partition: offset}}); err != nil {
				c.cfg.Log.Warn("kafka commit failed; the event may be handled again", "topic", topic, "partition", partition, "error", err)
			}
		}
	}()
	return cm
}

// handled queues offset for commit in place of any older offset still waiting. Only the worker
// calls it, so the send never blocks.
func (cm *committer) handled(offset int64) {
	select {
	case <-cm.next:
	default:
	}
	cm.next <- offset
}

// stop commits what is waiting and returns when the last commit is done.
func (cm *committer) stop() {
	close(cm.next)
	<-cm.done
}

// handle handles msg until it is done or dead-lettered (true), or ctx ends first (false).
func (c *consumer) handle(ctx context.Context, msg kafka.Message) bool {
	var ev Event
	if err := json.Unmarshal(msg.Value, &ev); err != nil || ev.ID == "" {
		return c.park(ctx, msg, nil, errors.New("malformed event: not a JSON envelope with an id"), 0, time.Now())
	}
	processedID := c.cfg.GroupID + ":" + ev.ID
	if c.seen(ctx, processedID) {
		return true
	}
	first := time.Now()
	backoff := c.cfg.RetryMin
	for attempt := 1; ; attempt++ {
		err := c.cfg.Handler(ctx, ev)
		if err == nil {
			if c.cfg.Processed == nil {
				return true
			}
			if err := markProcessed(ctx, c.cfg.Processed, processedID, ev.Type, c.cfg.DedupeFor); err != nil {
				c.cfg.Log.Warn("recording processed event failed", "processed_id", processedID, "error", err)
			}
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		if IsPermanent(err) || time.Since(first) >= c.cfg.RetryFor {
			return c.park(ctx, msg, &ev, err, attempt, first)
		}
		c.cfg.Log.Warn("event handler failed; retrying", "group", c.cfg.GroupID, "event_id", ev.ID, "type", ev.Type,
			"attempt", attempt, "retry_in", backoff.String(), "error", err)
		if !sleep(ctx, backoff) {
			return false
		}
		backoff = min(2*backoff, c.cfg.RetryMax)
	}
}

// seen reports whether the event was handled before, by a point read of its record.
func (c *consumer) seen(ctx context.Context, processedID string) bool {
	if c.cfg.Processed == nil {
		return false
	}
	opts := options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})
	return c.cfg.Processed.FindOne(ctx, mongox.ByID(processedID), opts).Err() == nil
}

// park stores msg as a dead letter, retrying the store until it takes it or ctx ends.
func (c *consumer) park(ctx context.Context, msg kafka.Message, ev *Event, cause error, attempts int, first time.Time) bool {
	d := DeadLetter{
		Group: c.cfg.GroupID, Topic: msg.Topic, Partition: msg.Partition, Offset: msg.Offset,
		Payload: string(msg.Value), Error: cause.Error(), Attempts: attempts, FirstFailedAt: first, ParkedAt: time.Now(),
	}
	if ev != nil {
		d.ID, d.EventID, d.Type = c.cfg.GroupID+":"+ev.ID, ev.ID, ev.Type
	} else {
		d.ID = c.cfg.GroupID + ":" + msg.Topic + ":" + strconv.Itoa(msg.Partition) + ":" + strconv.FormatInt(msg.Offset, 10)
	}
	c.cfg.Log.Error("event dead-lettered", "group", d.Group, "dead_letter", d.ID, "type", d.Type, "attempts", attempts, "error", cause)
	for {
		_, err := c.cfg.Dead.InsertOne(ctx, d)
		if err == nil || mongox.IsDuplicateKey(err) {
			return true
		}
		c.cfg.Log.Warn("storing a dead letter failed; retrying", "dead_letter", d.ID, "error", err)
		if !sleep(ctx, c.cfg.RetryMax) {
			return false
		}
	}
}

// markProcessed records a handled event for dedupe; a failure only costs a repeated handling.
func markProcessed(ctx context.Context, coll *mongo.Collection, id, typ string, keep time.Duration) error {
	_, err := coll.InsertOne(context.WithoutCancel(ctx), bson.D{
		{Key: "_id", Value: id}, {Key: "type", Value: typ}, {Key: "expires_at", Value: time.Now().Add(keep)},
	})
	if err != nil && !mongox.IsDuplicateKey(err) {
		return fmt.Errorf("record processed event: %w", err)
	}
	return nil
}

// sweepProcessed deletes expired dedupe records (FerretDB has no TTL indexes).
func sweepProcessed(ctx context.Context, coll *mongo.Collection, log *slog.Logger) {
	for sleep(ctx, 10*time.Minute) {
		_, err := coll.DeleteMany(ctx, bson.D{{Key: "expires_at", Value: bson.D{{Key: "$lt", Value: time.Now()}}}})
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
