package stream

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

func newLog(t *testing.T, max int64) (*Log, *redis.Client) {
	t.Helper()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	return NewLog(rdb, Retention{Age: time.Hour, Max: max}), rdb
}

func pending(list string, ids ...string) []Pending {
	var out []Pending
	for _, id := range ids {
		out = append(out, Pending{List: list, Entry: Entry{EventID: id, Event: "message", Data: []byte(`{"id":"` + id + `"}`)}})
	}
	return out
}

func ids(entries []Entry) []string {
	var out []string
	for _, e := range entries {
		out = append(out, e.EventID)
	}
	return out
}

// TestLogAppendsOnceAndResumes: an event appended twice is stored once; a reader resumes right
// after an event id; once that event is trimmed, or for an id never appended, resuming is
// ErrLost rather than a silent gap.
func TestLogAppendsOnceAndResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, _ := newLog(t, 3)
	if err := l.Append(ctx, pending("obj:a", "evt_1", "evt_2")); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(ctx, pending("obj:a", "evt_2", "evt_3")); err != nil { // evt_2 redelivered
		t.Fatal(err)
	}
	all, _, err := l.Read(ctx, "obj:a", Start, 10)
	if err != nil || !slices.Equal(ids(all), []string{"evt_1", "evt_2", "evt_3"}) {
		t.Fatalf("log = %v (%v), want evt_1..3 once each", ids(all), err)
	}
	p, err := l.After(ctx, "obj:a", "evt_1")
	if err != nil {
		t.Fatal(err)
	}
	after, _, _ := l.Read(ctx, "obj:a", p, 10)
	if !slices.Equal(ids(after), []string{"evt_2", "evt_3"}) {
		t.Fatalf("after evt_1 = %v", ids(after))
	}
	if err := l.Append(ctx, pending("obj:a", "evt_4")); err != nil { // trims evt_1
		t.Fatal(err)
	}
	if _, err := l.After(ctx, "obj:a", "evt_1"); !errors.Is(err, ErrLost) {
		t.Fatalf("after a trimmed event: %v, want ErrLost", err)
	}
	if _, err := l.After(ctx, "obj:a", "evt_never"); !errors.Is(err, ErrLost) {
		t.Fatalf("after an unknown event: %v, want ErrLost", err)
	}
	p, _ = l.After(ctx, "obj:a", "evt_2")
	after, _, _ = l.Read(ctx, "obj:a", p, 10)
	if !slices.Equal(ids(after), []string{"evt_3", "evt_4"}) {
		t.Fatalf("after evt_2 = %v", ids(after))
	}
	if tail, id, _ := l.Tail(ctx, "obj:a"); id != "evt_4" {
		t.Fatalf("tail id = %q", id)
	} else if rest, _, _ := l.Read(ctx, "obj:a", tail, 10); len(rest) != 0 {
		t.Fatalf("after the tail: %v", ids(rest))
	}
	other, _, _ := l.Read(ctx, "obj:b", Start, 10)
	if len(other) != 0 {
		t.Fatalf("another list holds %v", ids(other))
	}
}

// TestHubWakesReaders: an append wakes the readers of its list through Redis, not those of
// other lists.
func TestHubWakesReaders(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	l, rdb := newLog(t, 10)
	h := NewHub(rdb, slog.New(slog.DiscardHandler))
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	a, b := h.Watch("obj:a"), h.Watch("obj:b")
	defer a.Close()
	defer b.Close()
	// The subscription may not be in place yet; appending until a wake arrives bounds the wait.
	deadline := time.After(5 * time.Second)
	for woken := false; !woken; {
		if err := l.Append(ctx, pending("obj:a", "evt_"+time.Now().Format("150405.000000000"))); err != nil {
			t.Fatal(err)
		}
		select {
		case <-a.C:
			woken = true
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatal("the reader of obj:a was not woken")
		}
	}
	// Once subscribed, the hub wakes every reader once (wakes may have been missed before).
	select {
	case <-b.C:
	default:
	}
	if err := l.Append(ctx, pending("obj:a", "evt_last")); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.C:
	case <-time.After(5 * time.Second):
		t.Fatal("the reader of obj:a was not woken by a second append")
	}
	select {
	case <-b.C:
		t.Fatal("the reader of obj:b was woken by obj:a")
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the hub did not stop with its context")
	}
	<-h.Done()
}
