package ratelimit

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/httpx"
)

// Streams caps the event streams (and long polls) open at once per key (or, on public streams,
// per client IP) across every replica, and per replica. A slot is a member of a Redis sorted set
// per key, scored by when it expires; an open stream renews its slot while it lasts, so a replica
// that dies without closing its streams frees their slots within SlotTTL.
type Streams struct {
	rdb    *redis.Client
	perKey int
	local  chan struct{}
}

// SlotTTL is how long a slot outlives the last renewal of its stream.
const SlotTTL = time.Minute

// NewStreams caps streams at perKey per key and max on this replica.
func NewStreams(rdb *redis.Client, perKey, max int) *Streams {
	return &Streams{rdb: rdb, perKey: perKey, local: make(chan struct{}, max)}
}

var takeSlot = redis.NewScript(`
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if not redis.call('ZSCORE', KEYS[1], ARGV[4]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`)

// Open takes a slot for who (a key id, or ClientKey of an IP); release frees it. Past the cap
// the answer is 429 (per key) or 503 (per replica), with Retry-After. If Redis is down the
// stream is let through, as every limit is.
func (s *Streams) Open(ctx context.Context, who string) (release func(), err error) {
	select {
	case s.local <- struct{}{}:
	default:
		e := httpx.Errorf(http.StatusServiceUnavailable, httpx.CodeUnavailable,
			"this gateway replica holds as many event streams as it may: retry after Retry-After seconds")
		e.RetryAfter = 5 * time.Second
		return nil, e
	}
	freeLocal := func() { <-s.local }
	key := "svc:streams:" + who
	member := apikey.NewULID().String()
	ok, err := s.renew(ctx, key, member)
	if err != nil {
		return freeLocal, nil
	}
	if !ok {
		freeLocal()
		e := httpx.Errorf(http.StatusTooManyRequests, httpx.CodeRateLimited,
			"this key holds %d event streams already: close one, or retry after Retry-After seconds", s.perKey)
		e.RetryAfter = SlotTTL / 2
		return nil, e
	}
	r := &renewal{s: s, ctx: context.WithoutCancel(ctx), key: key, member: member, freeLocal: freeLocal}
	r.mu.Lock()
	r.timer = time.AfterFunc(SlotTTL/2, r.tick)
	r.mu.Unlock()
	return r.release, nil
}

// renewal keeps one open stream's slot alive until it is released.
type renewal struct {
	s           *Streams
	ctx         context.Context
	key, member string
	freeLocal   func()

	mu       sync.Mutex
	timer    *time.Timer
	released bool
}

func (r *renewal) tick() {
	c, cancel := context.WithTimeout(r.ctx, 2*time.Second)
	_, _ = r.s.renew(c, r.key, r.member)
	cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.released {
		r.timer.Reset(SlotTTL / 2)
	}
}

func (r *renewal) release() {
	r.mu.Lock()
	if r.released {
		r.mu.Unlock()
		return
	}
	r.released = true
	r.timer.Stop()
	r.mu.Unlock()
	r.freeLocal()
	c, cancel := context.WithTimeout(r.ctx, 2*time.Second)
	defer cancel()
	_ = r.s.rdb.ZRem(c, r.key, r.member).Err()
}

// renew takes or renews member's slot in key; false when the key is at its cap.
func (s *Streams) renew(ctx context.Context, key, member string) (bool, error) {
	now := time.Now()
	n, err := takeSlot.Run(ctx, s.rdb, []string{key},
		now.UnixMilli(), now.Add(SlotTTL).UnixMilli(), s.perKey, member, strconv.FormatInt(SlotTTL.Milliseconds(), 10)).Int()
	return n == 1, err
}
