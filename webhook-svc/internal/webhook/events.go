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

// publicFields are the fields of each internal event's data that a webhook payload carries.
// Everything else (keys, header values, private guidance, internal ids) stays behind: a field
// reaches a receiver only when it is listed here.
var publicFields = map[string][]string{
	events.ObjectCreated:        {},
	events.ObjectHashChanged:    {"previous_hash"},
	events.ClaimVerified:        {"id", "claim_id", "proof_type", "claimed_target", "status", "verified_at"},
	events.ContextSourceChanged: {"source_id", "kind", "title", "url", "included", "change"},
	events.ContextUpdated:       {"version", "updated_at", "title", "change"},
	events.FeedItemPublished:    {"item_id", "title", "body", "tags", "author_hash", "author_name", "posted_at"},
	events.MessageCreated:       {"message_id", "thread_id", "from_hash", "to_hash", "kind", "body", "created_at"},
	events.DecisionRecorded:     {"id", "decision_id", "node_id", "thread_id", "title", "confidence", "created_at"},
}

// internalChange names what happened for events whose public name covers several internal ones.
var internalChange = map[string]string{
	events.ObjectCreated:     "created",
	events.ObjectHashChanged: "hash_changed",
	events.FeedItemPublished: "feed_item_published",
}

// Payload is the JSON body of a delivery (Standard Webhooks' {type, timestamp, data}, with the
// event id that is also the webhook-id header).
type Payload struct {
	Type      string         `json:"type"`
	ID        string         `json:"id"`
	Timestamp string         `json:"timestamp"`
	Data      map[string]any `json:"data"`
}

// NewPayload builds the public payload of an internal event, or returns "" when the event has no
// public webhook event.
func NewPayload(ev events.Event) (name string, body []byte, err error) {
	name = events.WebhookEvent(ev.Type)
	fields, ok := publicFields[ev.Type]
	if name == "" || !ok {
		return "", nil, nil
	}
	var raw map[string]any
	if len(ev.Data) > 0 {
		if err := json.Unmarshal(ev.Data, &raw); err != nil {
			return "", nil, fmt.Errorf("decode %s data: %w", ev.Type, err)
		}
	}
	data := map[string]any{"hash": ev.Hash}
	for _, f := range fields {
		if v, ok := raw[f]; ok {
			data[f] = v
		}
	}
	if change, ok := internalChange[ev.Type]; ok {
		data["change"] = change
	}
	body, err = json.Marshal(Payload{Type: name, ID: ev.ID, Timestamp: ev.Time, Data: data})
	if err != nil {
		return "", nil, fmt.Errorf("encode %s payload: %w", ev.Type, err)
	}
	return name, body, nil
}
