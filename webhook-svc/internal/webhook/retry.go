package webhook

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultSchedule is the delay before each retry of a failing delivery (Svix's schedule): after
// the last one the delivery fails.
var DefaultSchedule = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
}

// RetryStrategy says when a failed attempt is tried again.
type RetryStrategy struct {
	Schedule []time.Duration
	// Jitter spreads each delay by up to ± this fraction, so that an endpoint coming back is not
	// hit by every retry at once.
	Jitter float64
	// MaxRetryAfter caps how long a Retry-After header may push the next attempt.
	MaxRetryAfter time.Duration
}

// NextDuration returns the delay before retry number retry (0 for the first retry) and false
// when the schedule is exhausted. retryAfter, when positive, is the endpoint's Retry-After: the
// delay is never shorter than it.
func (r RetryStrategy) NextDuration(retry int, retryAfter time.Duration) (time.Duration, bool) {
	if retry < 0 || retry >= len(r.Schedule) {
		return 0, false
	}
	d := r.Schedule[retry]
	if r.Jitter > 0 {
		d += time.Duration((rand.Float64()*2 - 1) * r.Jitter * float64(d))
	}
	if retryAfter > 0 {
		d = max(d, min(retryAfter, r.MaxRetryAfter))
	}
	return d, true
}

// ParseSchedule reads a comma-separated list of durations ("5s,5m,30m").
func ParseSchedule(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, part := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("retry schedule %q: %q is not a positive duration", s, part)
		}
		out = append(out, d)
	}
	return out, nil
}

// retryAfter reads a Retry-After header: delay-seconds or an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil && secs > 0 {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
