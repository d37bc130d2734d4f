package testkit

import (
	"encoding/json"
	"testing"

	"github.com/svcdev/svc/pkg/events"
)

// Consumed returns the event p as a consumer receives it from the broker: what a local test hands
// a service's projection in place of the service that publishes it.
func Consumed(t testing.TB, p events.Pending) events.Event {
	t.Helper()
	var ev events.Event
	if err := json.Unmarshal([]byte(p.Payload), &ev); err != nil {
		t.Fatalf("decode the payload of %s: %v", p.Payload, err)
	}
	return ev
}
