package events_test

import (
	"context"
	"testing"
	"time"

	"github.com/svcdev/svc/pkg/events"
)

// TestConsumerLagIsTheAgeOfTheOldestUnhandledEvent: while a handler holds an event, the group's
// lag is that event's age, counted from its publication (a Kafka timestamp, in milliseconds); once the event is handled and nothing
// else waits, the lag is 0.
func TestConsumerLagIsTheAgeOfTheOldestUnhandledEvent(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}, 1), make(chan struct{})
	f := newConsumerFixture(t, func(ctx context.Context, ev events.Event) error {
		select {
		case entered <- struct{}{}:
		default:
		}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	lag := events.NewLag()
	f.cfg.Lag = lag
	if got := lag.Age(time.Now()); got != 0 {
		t.Fatalf("lag before any event = %v, want 0", got)
	}
	f.start(t)
	before := time.Now().Truncate(time.Millisecond) // a Kafka timestamp has milliseconds
	f.publish(t, "obj_lag")
	after := time.Now()
	<-entered
	now := time.Now()
	if got := lag.Age(now); got < now.Sub(after) || got > now.Sub(before) {
		t.Fatalf("lag while the handler holds the event = %v, want between %v and %v (its age)", got, now.Sub(after), now.Sub(before))
	}
	close(release)
	eventually(t, 20*time.Second, "the lag is 0 once the event is handled", func() bool { return lag.Age(time.Now()) == 0 })
}
