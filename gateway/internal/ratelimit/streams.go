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

// Streams caps the event streams (and long polls) open at once per object and per client IP
// across every replica, and per replica. A slot is a member of a Redis sorted set
// per key, scored by when it expires; an open stream renews its slot while it lasts, so a replica
// that dies without closing its streams frees their slots within SlotTTL.
type Streams struct {
	rdb   *redis.Client
	local chan struct{}
}

// SlotTTL is how long a slot outlives the last renewal of its stream.
const SlotTTL = time.Minute

// NewStreams caps streams at max on this replica; Open names the other caps.
func NewStreams(rdb *redis.Client, max int) *Streams {
	return &Streams{rdb: rdb, local: make(chan struct{}, max)}
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

// Slot is one cap an open stream counts against: Who holds it (an object, or ClientKey of an IP),
// Cap is how many streams Who may hold at once, What names it in the refusal.
type Slot struct {
	Who  string
	Cap  int
	What string
}

// Open takes a slot of each of slots for one stream; release frees them. Past a cap the answer is
// 429 naming it, past the replica's 503, with Retry-After. If Redis is down the stream is let
// through, as every limit is.
func (s *Streams) Open(ctx context.Context, slots ...Slot) (release func(), err error) {
	select {
	case s.local <- struct{}{}:
	default:
		e := httpx.Errorf(http.StatusServiceUnavailable, httpx.CodeUnavailable,
			"this gateway replica holds as many event streams as it may: retry after Retry-After seconds")
		e.RetryAfter = 5 * time.Second
		return nil, e
	}
	var held []*renewal
	releaseAll := func() {
		for _, r := range held {
			r.release()
		}
		<-s.local
	}
	for _, slot := range slots {
		key := "svc:streams:" + slot.Who
		member := apikey.NewULID().String()
		ok, err := s.renew(ctx, key, member, slot.Cap)
		if err != nil {
			continue
		}
		if !ok {
			releaseAll()
			e := httpx.Errorf(http.StatusTooManyRequests, httpx.CodeRateLimited,
				"%s holds %d event streams already: close one, or retry after Retry-After seconds", slot.What, slot.Cap)
			e.RetryAfter = SlotTTL / 2
			return nil, e
		}
		r := &renewal{s: s, ctx: context.WithoutCancel(ctx), key: key, member: member, cap: slot.Cap}
		r.mu.Lock()
		r.timer = time.AfterFunc(SlotTTL/2, r.tick)
		r.mu.Unlock()
		held = append(held, r)
	}
	var once sync.Once
	return func() { once.Do(releaseAll) }, nil
}

// renewal keeps one open stream's slot alive until it is released.
type renewal struct {
	s           *Streams
	ctx         context.Context
	key, member string
	cap         int

	mu       sync.Mutex
	timer    *time.Timer
	released bool
}

func (r *renewal) tick() {
	c, cancel := context.WithTimeout(r.ctx, 2*time.Second)
	_, _ = r.s.renew(c, r.key, r.member, r.cap)
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
	c, cancel := context.WithTimeout(r.ctx, 2*time.Second)
	defer cancel()
	_ = r.s.rdb.ZRem(c, r.key, r.member).Err()
}

// renew takes or renews member's slot in key; false when the key is at cap.
func (s *Streams) renew(ctx context.Context, key, member string, cap int) (bool, error) {
	now := time.Now()
	n, err := takeSlot.Run(ctx, s.rdb, []string{key},
		now.UnixMilli(), now.Add(SlotTTL).UnixMilli(), cap, member, strconv.FormatInt(SlotTTL.Milliseconds(), 10)).Int()
	return n == 1, err
}
