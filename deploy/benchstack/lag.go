package main

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// lagWatcher measures how long an acknowledged send waits for its event on Kafka: from the
// moment the client has the 2xx to the moment a consumer sees an event with its request id.
type lagWatcher struct {
	mu      sync.Mutex
	pending map[string]time.Time // acknowledged, event not seen yet
	early   map[string]time.Time // event seen before the client had its answer
	lags    []time.Duration
	client  *kgo.Client
	done    chan struct{}
}

func newLagWatcher(brokers []string, topic string) (*lagWatcher, error) {
	c, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.AllowAutoTopicCreation())
	if err != nil {
		return nil, err
	}
	return &lagWatcher{pending: map[string]time.Time{}, early: map[string]time.Time{}, client: c, done: make(chan struct{})}, nil
}

func (l *lagWatcher) run(ctx context.Context) {
	defer close(l.done)
	for ctx.Err() == nil {
		fetches := l.client.PollFetches(ctx)
		now := time.Now()
		fetches.EachRecord(func(r *kgo.Record) {
			for _, h := range r.Headers {
				if h.Key == "request_id" {
					l.seen(string(h.Value), now)
				}
			}
		})
	}
}

func (l *lagWatcher) seen(rid string, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if acked, ok := l.pending[rid]; ok {
		l.lags = append(l.lags, at.Sub(acked))
		delete(l.pending, rid)
		return
	}
	l.early[rid] = at
}

// acked records that the send with request id rid answered 2xx now.
func (l *lagWatcher) acked(rid string) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.early[rid]; ok {
		l.lags = append(l.lags, 0)
		delete(l.early, rid)
		return
	}
	l.pending[rid] = now
}

func (l *lagWatcher) backlog() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.pending)
}

// drain waits until no acknowledged send lacks its event, or until limit; it returns how long
// that took and what is still missing.
func (l *lagWatcher) drain(limit time.Duration) (time.Duration, int) {
	start := time.Now()
	for time.Since(start) < limit {
		if l.backlog() == 0 {
			return time.Since(start), 0
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start), l.backlog()
}

// quantiles returns the lag's p50 and p99 so far.
func (l *lagWatcher) quantiles() (p50, p99 time.Duration, n int) {
	l.mu.Lock()
	lags := slices.Clone(l.lags)
	l.mu.Unlock()
	slices.Sort(lags)
	return quantile(lags, 0.50), quantile(lags, 0.99), len(lags)
}

func (l *lagWatcher) close() {
	l.client.Close()
	<-l.done
}
