package events

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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

// BatchHandler handles events of one partition, in their order, as one unit: a consumer whose
// writes per event are inserts can then write a whole batch in one command. Like a Handler it
// must be idempotent, for the whole batch and for any part of it: a batch that fails is handled
// again one event at a time, so that one failing event holds back only itself and what follows
// it, and a poison event is dead-lettered alone.
type BatchHandler func(ctx context.Context, evs []Event) error

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
	// Batch, when set, handles the events a partition has ready (up to MaxBatch, default 100) in
	// one call, in place of Handler. It needs a handler idempotent by its own writes: Processed
	// must be nil.
	Batch    BatchHandler
	MaxBatch int
	Log      *slog.Logger
	// DedupeFor is how long a handled id is remembered (default 7 days).
	DedupeFor time.Duration
	// RetryMin and RetryMax bound the backoff between attempts (200 ms, 30 s); RetryFor is how
	// long a failing event is retried before it is dead-lettered (1 h).
	RetryMin, RetryMax, RetryFor time.Duration
	// Health, when set, learns of partitions that cannot be read (see Health).
	Health *Health
	// Lag, when set, measures the age of the group's oldest unhandled event in this process.
	Lag *Lag
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
	cfg.MaxBatch = orDefault(cfg.MaxBatch, 100)
	if cfg.Batch != nil {
		if cfg.Processed != nil {
			return fmt.Errorf("consumer group %s: a batch handler keeps no dedupe records", cfg.GroupID)
		}
		batch := cfg.Batch
		cfg.Handler = func(ctx context.Context, ev Event) error { return batch(ctx, []Event{ev}) }
	}
	topics := make([]string, len(cfg.Topics))
	for i, t := range cfg.Topics {
		topics[i] = cfg.Prefix + t
	}
	group, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID:                     cfg.Prefix + cfg.GroupID,
		Brokers:                cfg.Brokers,
		Topics:                 topics,
		StartOffset:            kafka.FirstOffset,
		HeartbeatInterval:      time.Second,
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
	var failingSince time.Time
	for {
		gen, err := group.Next(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, kafka.ErrGroupClosed) {
				return nil
			}
			if failingSince.IsZero() {
				failingSince = time.Now()
			}
			cfg.Log.Warn("kafka: joining the consumer group failed", "group", cfg.GroupID, "error", err)
			if !sleep(ctx, time.Second) {
				return nil
			}
			continue
		}
		if !failingSince.IsZero() {
			// How long a broker's absence kept the group from reading, for the operator who
			// wonders why it fell behind.
			cfg.Log.Info("kafka: the consumer group joined again", "group", cfg.GroupID, "generation", gen.ID,
				"after", time.Since(failingSince).Round(time.Millisecond).String())
			failingSince = time.Time{}
		}
		for topic, parts := range gen.Assignments {
			for _, p := range parts {
				gen.Start(func(gctx context.Context) { c.partition(gctx, gen, topic, p) })
			}
		}
	}
}

type consumer struct {
	cfg ConsumerConfig
	// commitMu lets one offset commit at a time reach the group's coordinator: kafka-go's
	// connection waits for its answer by spinning while another request's answer is ahead of it,
	// so concurrent commits of the partitions burn CPU instead of waiting.
	commitMu sync.Mutex
}

// idleFetchWait is how long a fetch of an idle partition waits for a message. A message is
// returned as soon as it arrives, so the wait costs no latency; a short one only makes every idle
// partition reader poll the broker more often.
const idleFetchWait = 10 * time.Second

// stallAfter is the number of failed fetches in a row from which a partition counts as stalled:
// an error log line and /readyz say so.
const stallAfter = 3

// partition reads one partition from its committed offset until the generation ends.
func (c *consumer) partition(ctx context.Context, gen *kafka.Generation, topic string, p kafka.PartitionAssignment) {
	key := partitionKey(c.cfg.GroupID, topic, p.ID)
	defer c.cfg.Health.ok(key)
	defer c.cfg.Lag.caughtUp(key)
	// done silences the reader's logger once the partition is let go: the reader is closed in
	// the background and would report its connections' closing after the service stopped.
	var done atomic.Bool
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: c.cfg.Brokers, Topic: topic, Partition: p.ID,
		MinBytes: 1, MaxBytes: 10 << 20, MaxWait: idleFetchWait,
		// kafka-go's reader retries on its own what it cannot read and only tells this logger:
		// an offset past the partition's end would otherwise be waited on forever, in silence.
		ErrorLogger: kafka.LoggerFunc(func(msg string, args ...any) {
			if done.Load() || ctx.Err() != nil {
				return
			}
			text := fmt.Sprintf(msg, args...)
			if strings.Contains(text, "past the last offset") {
				c.cfg.Log.Error("kafka: the consumer's offset is past the partition's end", "group", c.cfg.GroupID,
					"topic", topic, "partition", p.ID, "detail", text)
				c.cfg.Health.fail(key, "offset past the partition's end")
				return
			}
			// What the reader retries on its own (a broker going away): its fetches' failures,
			// should they last, are logged and counted by the loop below.
			c.cfg.Log.Debug("kafka reader", "group", c.cfg.GroupID, "topic", topic, "partition", p.ID, "detail", text)
		}),
	})
	// Closing a reader waits for its fetch under way, up to idleFetchWait: nothing is committed
	// through the reader, so it is closed in the background and the partition is let go at once.
	defer func() { done.Store(true); go r.Close() }()
	commits := c.committer(gen, topic, p.ID)
	defer commits.stop()
	offset := c.checkOffset(ctx, topic, p)
	if offset != p.Offset {
		commits.handled(offset)
	}
	if err := r.SetOffset(offset); err != nil {
		c.cfg.Log.Warn("kafka: setting the partition offset failed", "topic", topic, "partition", p.ID, "error", err)
	}
	failures := 0
	for {
		msg, err := c.fetch(ctx, r, key)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			switch {
			case failures == stallAfter || failures > stallAfter && failures%60 == 0:
				c.cfg.Log.Error("kafka fetch keeps failing: the partition is stalled", "group", c.cfg.GroupID,
					"topic", topic, "partition", p.ID, "failures", failures, "error", err)
				c.cfg.Health.fail(key, err.Error())
			case failures < stallAfter:
				c.cfg.Log.Warn("kafka fetch failed", "topic", topic, "partition", p.ID, "error", err)
			}
			if !sleep(ctx, time.Second) {
				return
			}
			continue
		}
		if failures > 0 || c.cfg.Health != nil {
			failures = 0
			c.cfg.Health.ok(key)
		}
		if c.cfg.Batch != nil {
			batch := c.ready(ctx, r, msg)
			if !c.handleBatch(ctx, batch) {
				return
			}
			msg = batch[len(batch)-1]
		} else if !c.handle(ctx, msg) {
			return // interrupted: not committed, so delivered again
		}
		commits.handled(msg.Offset + 1)
	}
}

// fetch returns the partition's next message and keeps the group's lag: while the worker handles
// a message, the partition's oldest unhandled event is that message, produced at its timestamp;
// when no message is ready (none arrives within batchLinger), the partition is caught up, and
// the lag says so while the fetch waits.
func (c *consumer) fetch(ctx context.Context, r *kafka.Reader, key string) (kafka.Message, error) {
	lctx, cancel := context.WithTimeout(ctx, batchLinger)
	msg, err := r.FetchMessage(lctx)
	cancel()
	if err != nil && lctx.Err() != nil && ctx.Err() == nil {
		c.cfg.Lag.caughtUp(key)
		msg, err = r.FetchMessage(ctx)
	}
	if err == nil {
		c.cfg.Lag.pending(key, msg.Time)
	}
	return msg, err
}

// checkOffset returns the offset to read p from: its committed offset, unless that is past the
// partition's end. The broker then lost events that were handled (its log was cut or reset),
// and the new ones it takes are numbered from its end: reading from the committed offset would
// skip them. The consumer reads from the end instead, and says so loudly.
func (c *consumer) checkOffset(ctx context.Context, topic string, p kafka.PartitionAssignment) int64 {
	if p.Offset < 0 {
		return p.Offset // nothing committed: kafka-go starts at the first offset
	}
	client := &kafka.Client{Addr: kafka.TCP(c.cfg.Brokers...), Timeout: 10 * time.Second}
	res, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{
		topic: {kafka.LastOffsetOf(p.ID)},
	}})
	if err != nil {
		c.cfg.Log.Warn("kafka: reading the partition's end failed", "topic", topic, "partition", p.ID, "error", err)
		return p.Offset
	}
	for _, po := range res.Topics[topic] {
		if po.Partition != p.ID || po.Error != nil {
			continue
		}
		if p.Offset > po.LastOffset {
			detail := fmt.Sprintf("group %s, %s/%d: committed offset %d, end %d", c.cfg.GroupID, topic, p.ID, p.Offset, po.LastOffset)
			c.cfg.Log.Error("kafka: committed offset past the partition's end: the broker lost events; reading from its end",
				"group", c.cfg.GroupID, "topic", topic, "partition", p.ID, "committed", p.Offset, "end", po.LastOffset)
			c.cfg.Health.offsetReset(detail)
			return po.LastOffset
		}
	}
	return p.Offset
}

// batchLinger is how long a batch waits for the partition's next message before it is handled.
// The reader fetches messages ahead, so those already fetched join at once.
const batchLinger = time.Millisecond

// ready returns first and the partition's messages that follow it without waiting, up to MaxBatch.
func (c *consumer) ready(ctx context.Context, r *kafka.Reader, first kafka.Message) []kafka.Message {
	batch := []kafka.Message{first}
	for len(batch) < c.cfg.MaxBatch {
		lctx, cancel := context.WithTimeout(ctx, batchLinger)
		m, err := r.FetchMessage(lctx)
		cancel()
		if err != nil {
			if lctx.Err() == nil {
				c.cfg.Log.Warn("kafka fetch failed", "topic", first.Topic, "partition", first.Partition, "error", err)
			}
			break
		}
		batch = append(batch, m)
	}
	return batch
}

// handleBatch hands msgs to the batch handler in one call; should that fail, or should any of them
// not be an event, it handles them one at a time, each retried and dead-lettered on its own. It
// returns false when ctx ended first.
func (c *consumer) handleBatch(ctx context.Context, msgs []kafka.Message) bool {
	if len(msgs) > 1 {
		evs := make([]Event, 0, len(msgs))
		for _, m := range msgs {
			var ev Event
			if json.Unmarshal(m.Value, &ev) != nil || ev.ID == "" {
				break
			}
			evs = append(evs, ev)
		}
		if len(evs) == len(msgs) {
			err := c.cfg.Batch(ctx, evs)
			if err == nil {
				return true
			}
			if ctx.Err() != nil {
				return false
			}
			c.cfg.Log.Warn("event batch failed; handling its events one at a time", "group", c.cfg.GroupID,
				"events", len(evs), "error", err)
		}
	}
	for _, m := range msgs {
		if !c.handle(ctx, m) {
			return false
		}
	}
	return true
}

// commitEvery is the least time between two offset commits of a partition. A commit is a request
// to the group's coordinator (and a write to its log); a partition that keeps up handles its
// events one at a time, so committing after each would cost a commit per event. Spaced, a crash
// delivers again at most the events of the last commitEvery, which handlers take as any
// redelivery (dedupe records, inserts by _id); a partition let go commits at once (stop).
const commitEvery = 250 * time.Millisecond

// committer commits a partition's offsets beside its worker, so that the next event is handled
// while the last one is committed. Only the newest handled offset waiting is committed, at most
// once per commitEvery, so a burst costs a few commits, not one per event. Offsets only ever
// move past handled events.
type committer struct {
	next chan int64
	quit chan struct{}
	done chan struct{}
}

func (c *consumer) committer(gen *kafka.Generation, topic string, partition int) *committer {
	cm := &committer{next: make(chan int64, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(cm.done)
		var last time.Time
		for offset := range cm.next {
			offset, open := cm.newest(offset, time.Until(last.Add(commitEvery)))
			c.commitMu.Lock()
			err := gen.CommitOffsets(map[string]map[int]int64{topic: {partition: offset}})
			c.commitMu.Unlock()
			last = time.Now()
			if err != nil {
				c.cfg.Log.Warn("kafka commit failed; the event may be handled again", "topic", topic, "partition", partition, "error", err)
			}
			if !open {
				return
			}
		}
	}()
	return cm
}

// newest waits up to wait (less when stop is called) and returns the newest offset handled by
// then, offset or a later one, and whether more may come.
func (cm *committer) newest(offset int64, wait time.Duration) (int64, bool) {
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-cm.quit:
			t.Stop()
		}
	}
	select {
	case o, ok := <-cm.next:
		if !ok {
			return offset, false
		}
		return o, true
	default:
		return offset, true
	}
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

// stop commits what is waiting, at once, and returns when the last commit is done.
func (cm *committer) stop() {
	close(cm.quit)
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
