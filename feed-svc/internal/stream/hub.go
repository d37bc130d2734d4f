package stream

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Hub wakes the readers of this replica when a log grows on any replica. It holds one Redis
// subscription for the whole process (WakeChannel), not one per reader, and hands each wake to
// the readers of the log it names.
type Hub struct {
	rdb *redis.Client
	log *slog.Logger

	mu      sync.Mutex
	waiters map[string]map[*Waiter]struct{}
	// done is closed when Run returns: the service is stopping, and its streams end so that
	// their clients reconnect (with Last-Event-ID) to a replica that is not.
	done chan struct{}
}

// NewHub returns a hub over rdb; Run delivers its wakes.
func NewHub(rdb *redis.Client, log *slog.Logger) *Hub {
	return &Hub{rdb: rdb, log: log, waiters: map[string]map[*Waiter]struct{}{}, done: make(chan struct{})}
}

// Waiter is one reader's wake-up: C has a value when its log may have grown since the reader
// last drained it.
type Waiter struct {
	C    chan struct{}
	list string
	hub  *Hub
}

// Done is closed once the hub has stopped.
func (h *Hub) Done() <-chan struct{} { return h.done }

// Watch registers a reader of list. Register before reading, so that no append between the read
// and the wait goes unnoticed.
func (h *Hub) Watch(list string) *Waiter {
	w := &Waiter{C: make(chan struct{}, 1), list: list, hub: h}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.waiters[list] == nil {
		h.waiters[list] = map[*Waiter]struct{}{}
	}
	h.waiters[list][w] = struct{}{}
	return w
}

// Close unregisters the reader.
func (w *Waiter) Close() {
	h := w.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.waiters[w.list], w)
	if len(h.waiters[w.list]) == 0 {
		delete(h.waiters, w.list)
	}
}

// wake signals every reader of list; a reader that has not drained its last wake is not
// signalled twice (it reads everything new when it gets to it).
func (h *Hub) wake(list string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.waiters[list] {
		select {
		case w.C <- struct{}{}:
		default:
		}
	}
}

// wakeAll signals every reader: after the subscription was re-established, wakes may have been
// missed.
func (h *Hub) wakeAll() {
	h.mu.Lock()
	lists := slices.Collect(maps.Keys(h.waiters))
	h.mu.Unlock()
	for _, l := range lists {
		h.wake(l)
	}
}

// Run delivers wakes until ctx ends. go-redis re-subscribes after a lost connection; the
// readers' heartbeats re-read their logs meanwhile, and every reader is woken once the
// subscription is back.
func (h *Hub) Run(ctx context.Context) error {
	defer close(h.done)
	sub := h.rdb.Subscribe(ctx, WakeChannel)
	// A blocked Receive does not see ctx end; closing the subscription ends it.
	stop := context.AfterFunc(ctx, func() { _ = sub.Close() })
	defer stop()
	defer func() { _ = sub.Close() }()
	for {
		msg, err := sub.Receive(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			h.log.Warn("stream wake subscription", "error", err)
			select { // go-redis reconnects on the next Receive; don't spin meanwhile
			case <-ctx.Done():
				return nil
			case <-time.After(time.Second):
			}
			continue
		}
		switch m := msg.(type) {
		case *redis.Message:
			h.wake(m.Payload)
		case *redis.Subscription:
			h.wakeAll()
		}
	}
}
