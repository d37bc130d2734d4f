package events

import (
	"sync"
	"time"
)

// Lag measures how far a consumer group is behind: the age of its oldest unhandled event, the
// time since the oldest event a partition worker has fetched or is waiting to fetch but not yet
// handled was produced. A caught-up group's lag is 0. It is the measure to alert on and to
// throttle by: it says how long a write's effects take to reach the group's projection, whatever
// the rate, where an offset difference says only how many events are ahead.
type Lag struct {
	mu sync.Mutex
	// oldest holds, per partition this process reads, the production time of the oldest event
	// it has not handled; a partition that is caught up has no entry.
	oldest map[string]time.Time
}

// NewLag returns a lag measure with nothing behind.
func NewLag() *Lag { return &Lag{oldest: map[string]time.Time{}} }

// Age is the group's lag at now: the age of its oldest unhandled event, 0 when caught up.
func (l *Lag) Age(now time.Time) time.Duration {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var age time.Duration
	for _, t := range l.oldest {
		age = max(age, now.Sub(t))
	}
	return age
}

// pending records that partition's oldest unhandled event was produced at produced.
func (l *Lag) pending(partition string, produced time.Time) {
	if l == nil {
		return
	}
	if produced.Unix() <= 0 { // a message without a timestamp (an older producer's) counts from now
		produced = time.Now()
	}
	l.mu.Lock()
	l.oldest[partition] = produced
	l.mu.Unlock()
}

// caughtUp records that partition has nothing unhandled (or is no longer read here).
func (l *Lag) caughtUp(partition string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	delete(l.oldest, partition)
	l.mu.Unlock()
}
