// Package ratelimit applies the gateway's GCRA limits, kept in Redis so that every replica
// shares them.
package ratelimit

import (
	"context"
	"net/http"
	"net/netip"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/pkg/httpx"
)

// Config holds every limit, per minute with a burst.
type Config struct {
	ObjectsPerMin   int `env:"RATE_OBJECTS_PER_MIN, default=60"`
	ObjectsBurst    int `env:"RATE_OBJECTS_BURST, default=60"`
	MessagesPerMin  int `env:"RATE_MESSAGES_PER_MIN, default=120"`
	MessagesBurst   int `env:"RATE_MESSAGES_BURST, default=60"`
	RecipientPerMin int `env:"RATE_RECIPIENT_PER_MIN, default=600"`
	RecipientBurst  int `env:"RATE_RECIPIENT_BURST, default=600"`
	PublicPerMin    int `env:"RATE_PUBLIC_PER_MIN, default=600"`
	PublicBurst     int `env:"RATE_PUBLIC_BURST, default=600"`
	OwnerPerMin     int `env:"RATE_OWNER_PER_MIN, default=1200"`
	OwnerBurst      int `env:"RATE_OWNER_BURST, default=200"`
	// FeedPollInterval is how often a client may read one feed with content (0: no limit). Keep
	// it equal to feed-svc's FEED_POLL_INTERVAL, the max-age that feed answers announce.
	FeedPollInterval time.Duration `env:"RATE_FEED_POLL_INTERVAL, default=15m"`
	// AuthIP* limit, per client IP, the keys that cost work: each refused key and each lookup at
	// identity-svc (a key in no cache). A key answered from a cache never counts, so unknown keys
	// from one address are slowed and refused without locking out a good key from it.
	AuthIPPerMin int `env:"RATE_AUTH_IP_PER_MIN, default=1200"`
	AuthIPBurst  int `env:"RATE_AUTH_IP_BURST, default=200"`
	// StreamsPerKey caps the event streams and long polls open at once per object, whichever of
	// its keys opened them (per client IP on the public feed stream); StreamsPerIP those of every
	// key from one client IP; StreamsMax those one gateway replica holds.
	StreamsPerKey int `env:"RATE_STREAMS_PER_KEY, default=10"`
	StreamsPerIP  int `env:"RATE_STREAMS_PER_IP, default=50"`
	StreamsMax    int `env:"RATE_STREAMS_MAX, default=20000"`
}

// Limiter checks limits.
type Limiter struct{ l *redis_rate.Limiter }

// New returns a limiter over rdb.
func New(rdb *redis.Client) *Limiter { return &Limiter{l: redis_rate.NewLimiter(rdb)} }

// Limit is one rate: perMin per minute with the given burst.
type Limit struct {
	Name   string
	PerMin int
	Burst  int
}

// Allow takes one request of key against lim; it answers 429 with Retry-After when refused.
// A zero or negative rate disables the limit. If Redis is down the request is let through:
// limits protect the service, and refusing all traffic would be worse.
func (l *Limiter) Allow(ctx context.Context, lim Limit, key string) error {
	if lim.PerMin <= 0 {
		return nil
	}
	burst := lim.Burst
	if burst <= 0 {
		burst = lim.PerMin
	}
	res, err := l.l.Allow(ctx, "svc:rl:"+lim.Name+":"+key, redis_rate.Limit{Rate: lim.PerMin, Burst: burst, Period: time.Minute})
	if err != nil {
		return nil
	}
	if res.Allowed == 0 {
		e := httpx.Errorf(http.StatusTooManyRequests, httpx.CodeRateLimited, "rate limit exceeded (%s): retry later", lim.Name)
		e.RetryAfter = res.RetryAfter
		return e
	}
	return nil
}

// ObjectKey is the bucket of an object's owner limits: every key of the object (the owner key and
// its sub-keys) draws on it, so that sub-keys do not multiply the limit.
func ObjectKey(objectID string) string { return "obj:" + objectID }

// ClientKey is the bucket of a client IP: an IPv4 address itself, an IPv6 address its /64, the
// smallest block a single subscriber is usually given (one client holds all of its addresses).
func ClientKey(ip string) string {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	addr = addr.Unmap()
	if addr.Is4() {
		return addr.String()
	}
	prefix, _ := addr.Prefix(64)
	return prefix.String()
}
