// Package freshness carries the consumer groups' lag to the front door: every consuming replica
// reports the lag of its groups (events.Lag) into one shared Redis hash a few times a second, and
// the gateway reads it, so that it refuses the public writes that feed the projections while one
// of them is too far behind, instead of letting the backlog, and the time a write takes to show,
// grow without bound.
package freshness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Key is the shared Redis hash of the groups' lag: one field per group and replica,
// "<service>.<group>|<replica>", whose value is "<lag in ms>:<report time in unix ms>". Every
// consuming service writes its own fields; the gateway reads them all.
const Key = "svc:lag"

// Interval is how often a replica reports; a report older than Stale is a replica that stopped
// (its field is ignored, and pruned by the next reporter that sees it).
const (
	Interval = 250 * time.Millisecond
	Stale    = 5 * time.Second
)

// keyTTL lets the whole hash expire when no replica reports any more.
const keyTTL = time.Minute

// Reporter reports one replica's groups' lag.
type Reporter struct {
	rdb     *redis.Client
	replica string
	reports int
}

// NewReporter returns the reporter of one replica, named at random.
func NewReporter(rdb *redis.Client) *Reporter {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return &Reporter{rdb: rdb, replica: hex.EncodeToString(b)}
}

// Report writes the lag of each group ("<service>.<group>") at now, and every forty reports
// prunes the fields of replicas that stopped reporting.
func (r *Reporter) Report(ctx context.Context, lags map[string]time.Duration, now time.Time) error {
	if len(lags) == 0 {
		return nil
	}
	values := make([]any, 0, 2*len(lags))
	for group, lag := range lags {
		values = append(values, group+"|"+r.replica, strconv.FormatInt(lag.Milliseconds(), 10)+":"+strconv.FormatInt(now.UnixMilli(), 10))
	}
	pipe := r.rdb.Pipeline()
	pipe.HSet(ctx, Key, values...)
	pipe.PExpire(ctx, Key, keyTTL)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("report consumer lag: %w", err)
	}
	if r.reports++; r.reports%40 == 0 {
		return r.prune(ctx, now)
	}
	return nil
}

// prune deletes the fields of replicas that stopped reporting.
func (r *Reporter) prune(ctx context.Context, now time.Time) error {
	all, err := r.rdb.HGetAll(ctx, Key).Result()
	if err != nil {
		return fmt.Errorf("read consumer lag: %w", err)
	}
	var stale []string
	for field, v := range all {
		if _, at, ok := parse(v); !ok || now.Sub(at) > Stale {
			stale = append(stale, field)
		}
	}
	if len(stale) > 0 {
		if err := r.rdb.HDel(ctx, Key, stale...).Err(); err != nil {
			return fmt.Errorf("prune consumer lag: %w", err)
		}
	}
	return nil
}

// Withdraw deletes this replica's fields, at shutdown.
func (r *Reporter) Withdraw(ctx context.Context, groups []string) error {
	fields := make([]string, len(groups))
	for i, g := range groups {
		fields[i] = g + "|" + r.replica
	}
	if len(fields) == 0 {
		return nil
	}
	return r.rdb.HDel(ctx, Key, fields...).Err()
}

func parse(v string) (lag time.Duration, at time.Time, ok bool) {
	ms, when, _ := strings.Cut(v, ":") // without ":", when is "" and does not parse
	l, err1 := strconv.ParseInt(ms, 10, 64)
	a, err2 := strconv.ParseInt(when, 10, 64)
	if err1 != nil || err2 != nil {
		return 0, time.Time{}, false
	}
	return time.Duration(l) * time.Millisecond, time.UnixMilli(a), true
}

// Reader reads the groups' lag for the gateway, at most once per Interval per process.
type Reader struct {
	rdb *redis.Client
	// groups, when not empty, are the only groups ("<service>.<group>") that count.
	groups map[string]bool

	mu     sync.Mutex
	readAt time.Time
	worst  Behind
}

// Behind is the group furthest behind and its lag.
type Behind struct {
	Group string
	Lag   time.Duration
}

// NewReader returns a reader of the groups' lag; groups, when not empty, are the only ones that
// count.
func NewReader(rdb *redis.Client, groups []string) *Reader {
	r := &Reader{rdb: rdb, groups: map[string]bool{}}
	for _, g := range groups {
		if g = strings.TrimSpace(g); g != "" {
			r.groups[g] = true
		}
	}
	return r
}

// Worst returns the group furthest behind, as the replicas last reported (reports older than
// Stale are left out). When Redis cannot be read it answers nothing behind: the front door stays
// open rather than refuse every write for want of a measure.
func (r *Reader) Worst(ctx context.Context, now time.Time) Behind {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now.Sub(r.readAt) < Interval {
		return r.worst
	}
	r.readAt, r.worst = now, Behind{}
	all, err := r.rdb.HGetAll(ctx, Key).Result()
	if err != nil {
		return r.worst
	}
	for field, v := range all {
		group, _, _ := strings.Cut(field, "|")
		if len(r.groups) > 0 && !r.groups[group] {
			continue
		}
		lag, at, ok := parse(v)
		if !ok || now.Sub(at) > Stale {
			continue
		}
		if lag > r.worst.Lag {
			r.worst = Behind{Group: group, Lag: lag}
		}
	}
	return r.worst
}
