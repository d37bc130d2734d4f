package events

import (
	"encoding/json"
	"fmt"
)

// publicFields are the fields of each internal event's data that a public payload (a webhook
// delivery, an event stream) carries. Everything else (keys, header values, private guidance,
// internal ids) stays behind: a field reaches a receiver only when it is listed here.
var publicFields = map[string][]string{
	ObjectCreated:        {},
	ObjectHashChanged:    {"previous_hash"},
	ClaimVerified:        {"id", "claim_id", "proof_type", "claimed_target", "status", "verified_at"},
	ContextSourceChanged: {"source_id", "kind", "title", "url", "included", "change"},
	ContextUpdated:       {"version", "updated_at", "title", "change"},
	FeedItemPublished:    {"item_id", "title", "body", "tags", "author_hash", "author_name", "posted_at"},
	MessageCreated:       {"message_id", "thread_id", "from_hash", "to_hash", "kind", "body", "created_at"},
	DecisionRecorded:     {"id", "decision_id", "node_id", "thread_id", "title", "confidence", "created_at"},
}

// internalChange names what happened for events whose public name covers several internal ones.
var internalChange = map[string]string{
	ObjectCreated:     "created",
	ObjectHashChanged: "hash_changed",
	FeedItemPublished: "feed_item_published",
}

// ownerOnlyChange is the change of a context.updated that a decision-memory write published
// while decision memory shared the context's versions (a replica of an older context-svc, in a
// rolling upgrade): decision memory is the owner's alone, so it has no public event.
const ownerOnlyChange = "decision_memory"

// Payload is the public form of an event: the body of a webhook delivery (Standard Webhooks'
// {type, timestamp, data}, with the event id that is also the webhook-id header) and the data of
// an event stream's event, whose SSE id is the same event id.
type Payload struct {
	Type      string         `json:"type"`
	ID        string         `json:"id"`
	Timestamp string         `json:"timestamp"`
	Data      map[string]any `json:"data"`
}

// Public builds the public payload of an internal event; ok is false when the event has no
// public name. An error means the event's data is malformed, which retrying cannot change.
func Public(ev Event) (p Payload, ok bool, err error) {
	name := WebhookEvent(ev.Type)
	fields, listed := publicFields[ev.Type]
	if name == "" || !listed {
		return Payload{}, false, nil
	}
	var raw map[string]any
	if len(ev.Data) > 0 {
		if err := json.Unmarshal(ev.Data, &raw); err != nil {
			return Payload{}, false, fmt.Errorf("decode %s data: %w", ev.Type, err)
		}
	}
	if ev.Type == ContextUpdated && raw["change"] == ownerOnlyChange {
		return Payload{}, false, nil
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
	return Payload{Type: name, ID: ev.ID, Timestamp: ev.Time, Data: data}, true, nil
}
