// Package stream keeps the event streams: per object, the public events of the six spec events
// (GET /api/objects/{hash}/events), and the rows of the network's feed (GET /api/feed/stream). A
// consumer of the event pipeline appends each event once to a bounded log in Redis and wakes
// the readers waiting on that log on every replica, so any replica serves any stream and
// resumes it from an event id.
package stream

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// WakeChannel is the Redis channel on which an append names the log it grew.
const WakeChannel = "svc:stream:wake"

// Entry is one event of a log: its event id (the SSE id and webhook-id), its SSE event name and
// its JSON data.
type Entry struct {
	EventID string
	Event   string
	Data    []byte
	// pos is the entry's position in the Redis stream (set by reads).
	pos string
}

// Retention bounds every log: entries older than Age or beyond Max of a log are dropped.
type Retention struct {
	Age time.Duration
	Max int64
}

// Log is the set of logs in Redis. A log is a Redis stream `svc:stream:{<list>}`; each event id
// appended has a marker `svc:stream:{<list>}:at:<event id>` holding its position, which both
// makes an append happen once per event id and lets a reader resume from an event id in one read.
type Log struct {
	rdb *redis.Client
	ret Retention
}

// NewLog returns the logs kept in rdb with retention ret.
func NewLog(rdb *redis.Client, ret Retention) *Log { return &Log{rdb: rdb, ret: ret} }

// Retention is the log's retention.
func (l *Log) Retention() Retention { return l.ret }

func streamKey(list string) string          { return "svc:stream:{" + list + "}" }
func markerKey(list, eventID string) string { return streamKey(list) + ":at:" + eventID }

//go:embed append.lua
var appendSource string

var appendScript = redis.NewScript(appendSource)

// Pending is an entry to append to a list.
type Pending struct {
	List string
	Entry
}

// Append appends entries in one round trip, each once per event id whatever how often it is
// appended, and wakes the readers of their lists.
func (l *Log) Append(ctx context.Context, entries []Pending) error {
	if len(entries) == 0 {
		return nil
	}
	now := time.Now()
	minID := strconv.FormatInt(now.Add(-l.ret.Age).UnixMilli(), 10)
	ttl := strconv.FormatInt(int64(l.ret.Age/time.Second)+1, 10)
	maxLen := strconv.FormatInt(l.ret.Max, 10)
	pipe := l.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(entries))
	for i, e := range entries {
		cmds[i] = appendScript.Run(ctx, pipe, []string{streamKey(e.List), markerKey(e.List, e.EventID)},
			e.EventID, e.Event, string(e.Data), maxLen, minID, ttl, WakeChannel, e.List)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		// A script not yet loaded on this server is loaded and run again by Run; a pipeline
		// cannot, so retry once with the script in place.
		if !redis.HasErrorPrefix(err, "NOSCRIPT") {
			return fmt.Errorf("append to streams: %w", err)
		}
		if err := appendScript.Load(ctx, l.rdb).Err(); err != nil {
			return fmt.Errorf("load stream script: %w", err)
		}
		return l.Append(ctx, entries)
	}
	for _, c := range cmds {
		if err := c.Err(); err != nil && !errors.Is(err, redis.Nil) {
			return fmt.Errorf("append to stream: %w", err)
		}
	}
	return nil
}

// ErrLost says that a resume point is no longer retained (or never was): events after it may
// have been dropped.
var ErrLost = errors.New("the event is no longer retained")

// Position is where a reader stands in a log: after the entry at pos ("0-0": before the oldest).
type Position struct{ pos string }

// Start is the position before the oldest retained entry.
var Start = Position{pos: "0-0"}

// Tail is the position after the newest entry, with that entry's event id ("" for an empty
// log): a reader from here sees only what comes next.
func (l *Log) Tail(ctx context.Context, list string) (Position, string, error) {
	last, err := l.rdb.XRevRangeN(ctx, streamKey(list), "+", "-", 1).Result()
	if err != nil {
		return Position{}, "", fmt.Errorf("read stream tail: %w", err)
	}
	if len(last) == 0 {
		return Start, "", nil
	}
	id, _ := last[0].Values["id"].(string)
	return Position{pos: last[0].ID}, id, nil
}

// After is the position right after the event eventID, or ErrLost when that event is no longer
// retained: its marker expired, or its entry was trimmed (trimming drops the oldest first, so
// while its entry is there, every later one is too).
func (l *Log) After(ctx context.Context, list, eventID string) (Position, error) {
	pos, err := l.rdb.Get(ctx, markerKey(list, eventID)).Result()
	if errors.Is(err, redis.Nil) {
		return Position{}, ErrLost
	}
	if err != nil {
		return Position{}, fmt.Errorf("read stream marker: %w", err)
	}
	found, err := l.rdb.XRangeN(ctx, streamKey(list), pos, pos, 1).Result()
	if err != nil {
		return Position{}, fmt.Errorf("read stream entry: %w", err)
	}
	if len(found) == 0 {
		return Position{}, ErrLost
	}
	return Position{pos: pos}, nil
}

// Read returns up to count entries after p, oldest first, and the position after them.
func (l *Log) Read(ctx context.Context, list string, p Position, count int64) ([]Entry, Position, error) {
	msgs, err := l.rdb.XRangeN(ctx, streamKey(list), "("+p.pos, "+", count).Result()
	if err != nil {
		return nil, p, fmt.Errorf("read stream: %w", err)
	}
	out := make([]Entry, 0, len(msgs))
	for _, m := range msgs {
		id, _ := m.Values["id"].(string)
		ev, _ := m.Values["event"].(string)
		data, _ := m.Values["data"].(string)
		out = append(out, Entry{EventID: id, Event: ev, Data: []byte(data), pos: m.ID})
		p = Position{pos: m.ID}
	}
	return out, p, nil
}
