package ratelimit

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// Poller enforces polite feed polling: one counted read per client and feed per interval. A
// read is counted when it is answered with content; a conditional read answered 304 is not, so
// that a poller holding the current version may ask as often as it likes. The mark is one Redis
// key set only if absent, so concurrent reads of one client and feed count exactly one.
type Poller struct {
	rdb   *redis.Client
	every time.Duration
}

// NewPoller returns a poller over rdb; a zero interval disables it.
func NewPoller(rdb *redis.Client, every time.Duration) *Poller {
	return &Poller{rdb: rdb, every: every}
}

// Interval is the poll interval.
func (p *Poller) Interval() time.Duration { return p.every }

func pollKey(key string) string { return "svc:poll:" + key }

// Wait returns how long key must wait before its next counted read (0: it may read now). If
// Redis is down the read is let through, as every limit is.
func (p *Poller) Wait(ctx context.Context, key string) time.Duration {
	if p.every <= 0 {
		return 0
	}
	ttl, err := p.rdb.PTTL(ctx, pollKey(key)).Result()
	if err != nil || ttl < 0 {
		return 0
	}
	return ttl
}

// Count counts a read answered with content. It returns 0 when the read was the first of its
// interval, else how long key must wait: the read is then refused.
func (p *Poller) Count(ctx context.Context, key string) time.Duration {
	if p.every <= 0 {
		return 0
	}
	first, err := p.rdb.SetNX(ctx, pollKey(key), 1, p.every).Result()
	if err != nil || first {
		return 0
	}
	if wait := p.Wait(ctx, key); wait > 0 {
		return wait
	}
	return time.Second // the mark expired between the two calls: a retry will be counted
}
