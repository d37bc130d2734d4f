package events

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Health is what a service's consumers know to be wrong with the partitions they read, so that
// /readyz and the metrics show it instead of a consumer stalling in silence: a partition whose
// fetches keep failing (an unreadable batch, a broker that does not answer) and committed
// offsets found past a partition's end (the broker lost events that had been handled).
type Health struct {
	mu      sync.Mutex
	failing map[string]string // "group topic/partition" → the last error
	resets  int64
	// lastReset is when an offset was last found past a partition's end; /readyz warns of it
	// for resetWarnFor.
	lastReset  time.Time
	lastDetail string
}

// resetWarnFor is how long /readyz warns of an offset found past a partition's end.
const resetWarnFor = 10 * time.Minute

// NewHealth returns an empty Health.
func NewHealth() *Health { return &Health{failing: map[string]string{}} }

func partitionKey(group, topic string, partition int) string {
	return fmt.Sprintf("%s %s/%d", group, topic, partition)
}

func (h *Health) fail(key, err string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failing[key] = err
}

func (h *Health) ok(key string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.failing, key)
}

func (h *Health) offsetReset(detail string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.resets++
	h.lastReset, h.lastDetail = time.Now(), detail
}

// Failing is the number of partitions whose fetches are failing now.
func (h *Health) Failing() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.failing)
}

// OffsetResets is the number of committed offsets found past their partition's end.
func (h *Health) OffsetResets() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.resets
}

// Problem describes what is wrong: failing partitions (stalled is true), or else an offset found
// past a partition's end within the last ten minutes; "" when nothing is.
func (h *Health) Problem() (msg string, stalled bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.failing) > 0 {
		keys := make([]string, 0, len(h.failing))
		for k, err := range h.failing {
			keys = append(keys, k+": "+err)
		}
		slices.Sort(keys)
		return "event consumption stalled: " + strings.Join(keys, "; "), true
	}
	if !h.lastReset.IsZero() && time.Since(h.lastReset) < resetWarnFor {
		return fmt.Sprintf("%d committed offset(s) were past their partition's end: the broker lost events (last: %s)",
			h.resets, h.lastDetail), false
	}
	return "", false
}
