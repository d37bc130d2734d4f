package ratelimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/redis/go-redis/v9"
)

// Poller enforces polite feed polling: one counted read per client and feed per interval. A
// read is counted when it is answered with content; a conditional read answered 304 is not, so
// that a poller holding the current version may ask as often as it likes.
//
// A read claims its interval before it is forwarded, in one atomic step (Claim), so that of
// concurrent first reads of one client and feed exactly one is computed and the others are
// refused at the door; a read that ends without content gives its claim back (Release).
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

// claimScript marks key for ARGV[2] ms with the token ARGV[1] if it is unmarked, and answers 0;
// else it answers the mark's remaining time in ms (at least 1). Check and mark are one step.
var claimScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 0
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 1 then
  return 1
end
return ttl
`)

// releaseScript removes key's mark if it is still the one token ARGV[1] set.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`)

// Claim takes key's interval for a read about to be forwarded. It returns the claim's token and
// 0 when the read may go on, or how long key must wait: the read is then refused. If Redis is
// down the read is let through with no claim (token ""), as every limit lets requests through.
func (p *Poller) Claim(ctx context.Context, key string) (token string, wait time.Duration) {
	if p.every <= 0 {
		return "", 0
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	token = hex.EncodeToString(b[:])
	ms, err := claimScript.Run(ctx, p.rdb, []string{pollKey(key)}, token, p.every.Milliseconds()).Int64()
	if err != nil {
		return "", 0
	}
	if ms > 0 {
		return "", time.Duration(ms) * time.Millisecond
	}
	return token, 0
}

// Release gives back a claim whose read ended without content (a 304, an error), so that it
// does not count. A claim taken over by a later read is left alone.
func (p *Poller) Release(ctx context.Context, key, token string) {
	if p.every <= 0 || token == "" {
		return
	}
	_ = releaseScript.Run(ctx, p.rdb, []string{pollKey(key)}, token).Err()
}
