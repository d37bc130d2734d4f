package webhook

import (
	"encoding/json"
	"fmt"

	"github.com/svcdev/svc/pkg/events"
)

// Events are the six public webhook events (spec "Events").
var Events = []string{
	events.WebhookIdentifier, events.WebhookClaimVerified, events.WebhookContextSource,
	events.WebhookContextUpdated, events.WebhookMessage, events.WebhookDecision,
}

// ContextEvents are the events a context subscription may select.
var ContextEvents = []string{events.WebhookContextUpdated}

// NewPayload builds the public payload of an internal event, or returns "" when the event has no
// public webhook event.
func NewPayload(ev events.Event) (name string, body []byte, err error) {
	p, ok, err := events.Public(ev)
	if err != nil || !ok {
		return "", nil, err
	}
	body, err = json.Marshal(p)
	if err != nil {
		return "", nil, fmt.Errorf("encode %s payload: %w", ev.Type, err)
	}
	return p.Type, body, nil
}
