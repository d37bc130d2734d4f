package routes

// Events are the routes the gateway answers itself: the MCP server card, and the event catalog,
// answered from the schemas below, which are also the OpenAPI
// document's webhooks.
var Events = []Route{
	{Method: "GET", Path: "/.well-known/mcp/server-card.json", Service: Gateway, Auth: Public,
		Summary: "The MCP server card (SEP-2127): the MCP server's name, version and remote (/mcp, streamable HTTP), as server.json names them",
		Tag:     "events", Response: "MCPServerCard"},
	{Method: "GET", Path: "/api/webhook-events", Service: Gateway, Auth: Public,
		Summary: "List the event types with a description, the JSON Schema (2020-12) of their payload and an example", Tag: "events",
		Response: "WebhookEventCatalog"},
}

// WebhookEvent is one public event type: what webhook deliveries post and event streams carry.
type WebhookEvent struct {
	Type        string
	Description string
	// Data is the schema of the payload's data; the payload is {type, id, timestamp, data}.
	Data    Schema
	Example map[string]any
}

// SchemaName is the name of the event's payload schema in the OpenAPI components.
func (e WebhookEvent) SchemaName() string {
	name := "Event"
	up := true
	for _, r := range e.Type {
		switch {
		case r == '_':
			up = true
		case up:
			name += string(r - 'a' + 'A')
			up = false
		default:
			name += string(r)
		}
	}
	return name
}

// Payload is the JSON Schema of the event's whole payload, self-contained (no references).
func (e WebhookEvent) Payload() Schema {
	return Obj(map[string]Schema{
		"type":      Schema{"const": e.Type},
		"id":        Schema{"type": "string", "minLength": 1, "maxLength": 64, "description": "the event id: also the webhook-id header and the event stream's id"},
		"timestamp": Schema{"type": "string", "format": "date-time", "description": "when the event happened"},
		"data":      e.Data,
	}, "type", "id", "timestamp", "data")
}

func timestamp() Schema { return Schema{"type": "string", "format": "date-time"} }

// hashField is the hash of the object whose event it is, as it was when it happened.
var hashField = Schema{"type": "string", "description": "the hash of the object the event belongs to"}

// WebhookEvents are the six public events (spec "Events"). The data fields are those
// pkg/events.Public lets through; a test checks every payload the suite provokes against them.
var WebhookEvents = []WebhookEvent{
	{Type: "identifier", Description: "The object was created, or its hash changed (a custom hash claimed): data.change says which.",
		Data: Obj(map[string]Schema{
			"hash": hashField, "change": Enum("created", "hash_changed"),
			"previous_hash": Schema{"type": "string", "description": "on hash_changed: the hash before, which keeps resolving"},
		}, "hash", "change"),
		Example: payload("identifier", map[string]any{"hash": "svc_alice", "change": "hash_changed", "previous_hash": "svc_k2j4n5b6v7c8x9z0a1s2"})},
	{Type: "claim_verified", Description: "An ownership claim of the object (domain, meta tag, social profile) was verified.",
		Data: Obj(map[string]Schema{
			"hash": hashField, "id": Str(), "claim_id": Str(), "proof_type": Str(), "claimed_target": Str(),
			"status": Str(), "verified_at": timestamp(),
		}, "hash", "claim_id", "proof_type", "claimed_target", "verified_at"),
		Example: payload("claim_verified", map[string]any{"hash": "svc_alice", "claim_id": "clm_01JD8X2K4M5N6P7Q8R9S0T1V2W",
			"proof_type": "domain", "claimed_target": "example.com", "verified_at": "2026-11-24T18:00:00.000Z"})},
	{Type: "context_source", Description: "A source of the object's context was added, changed or deleted (text sources carry no text).",
		Data: Obj(map[string]Schema{
			"hash": hashField, "source_id": Str(), "kind": Str(), "title": Str(), "url": Str(), "included": Bool(),
			"change": Schema{"type": "string", "description": "created, updated or deleted"},
		}, "hash", "source_id", "kind", "title", "included", "change"),
		Example: payload("context_source", map[string]any{"hash": "svc_alice", "source_id": "src_01JD8X2K4M5N6P7Q8R9S0T1V2W",
			"kind": "url", "title": "Homepage", "url": "https://example.com/", "included": true, "change": "created"})},
	{Type: "context_updated", Description: "The object's context changed (a new version: data.change names what changed), or an item was published to its feed (data.change is feed_item_published).",
		Data: Schema{"oneOf": []any{
			Obj(map[string]Schema{
				"hash": hashField, "version": Int(), "updated_at": timestamp(), "title": Str(),
				"change": Schema{"type": "string", "description": "llm_txt, context, rules, sources or sync (decision memory is owner-only: it has no event)"},
			}, "hash", "version", "updated_at", "change"),
			Obj(map[string]Schema{
				"hash": hashField, "change": Schema{"const": "feed_item_published"}, "item_id": Str(), "title": Str(),
				"body": Str(), "tags": Arr(tag), "author_hash": Nullable(Str()), "author_name": Str(), "posted_at": timestamp(),
			}, "hash", "change", "item_id", "title", "posted_at"),
		}},
		Example: payload("context_updated", map[string]any{"hash": "svc_alice", "version": 7, "updated_at": "2026-11-24T18:00:00.000Z",
			"title": "Alice", "change": "llm_txt"})},
	{Type: "message", Description: "A message arrived in the object's mailbox.",
		Data: Obj(map[string]Schema{
			"hash": hashField, "message_id": Str(), "thread_id": Str(), "from_hash": Str(), "to_hash": Str(),
			"kind": Str(), "body": Str(), "created_at": timestamp(),
		}, "hash", "message_id", "thread_id", "from_hash", "to_hash", "kind", "body", "created_at"),
		Example: payload("message", map[string]any{"hash": "svc_alice", "message_id": "msg_01JD8X2K4M5N6P7Q8R9S0T1V2W",
			"thread_id": "thr_01JD8X2K4M5N6P7Q8R9S0T1V2W", "from_hash": "svc_bob", "to_hash": "svc_alice", "kind": "text",
			"body": "Hello", "created_at": "2026-11-24T18:00:00.000Z"})},
	{Type: "decision", Description: "A decision was recorded in a thread of the object.",
		Data: Obj(map[string]Schema{
			"hash": hashField, "id": Str(), "decision_id": Str(), "node_id": Str(), "thread_id": Str(), "title": Str(),
			"confidence": Nullable(Schema{"type": "number", "minimum": 0, "maximum": 1}), "created_at": timestamp(),
		}, "hash", "node_id", "thread_id", "title", "created_at"),
		Example: payload("decision", map[string]any{"hash": "svc_alice", "node_id": "nod_01JD8X2K4M5N6P7Q8R9S0T1V2W",
			"thread_id": "thr_01JD8X2K4M5N6P7Q8R9S0T1V2W", "title": "Ship on Friday", "confidence": 0.8,
			"created_at": "2026-11-24T18:00:00.000Z"})},
}

func payload(event string, data map[string]any) map[string]any {
	return map[string]any{"type": event, "id": "evt_01JD8X2K4M5N6P7Q8R9S0T1V2W", "timestamp": "2026-11-24T18:00:00.000Z", "data": data}
}

// Catalog is the answer of GET /api/webhook-events: each event with its payload's schema, which
// declares its dialect so that it stands alone.
func Catalog() map[string]any {
	list := make([]any, 0, len(WebhookEvents))
	for _, e := range WebhookEvents {
		s := e.Payload()
		s["$schema"] = "https://json-schema.org/draft/2020-12/schema"
		list = append(list, map[string]any{"type": e.Type, "description": e.Description, "schema": s, "example": e.Example})
	}
	return map[string]any{"events": list}
}

// EventSchemas are the shapes of the catalog, the event streams, and each event's payload (the
// OpenAPI document's webhooks refer to them).
var EventSchemas = func() map[string]Schema {
	out := map[string]Schema{
		"MCPServerCard": Obj(map[string]Schema{
			"$schema": Str(), "name": Str(), "title": Str(), "description": Str(), "version": Str(), "websiteUrl": Str(),
			"remotes": Arr(Obj(map[string]Schema{
				"type": Enum("streamable-http"), "url": Str(),
				"headers": Arr(Obj(map[string]Schema{"name": Str(), "description": Str(), "isRequired": Bool(), "isSecret": Bool()}, "name", "isSecret")),
			}, "type", "url")),
		}, "$schema", "name", "version", "remotes"),
		"WebhookEventCatalog": Obj(map[string]Schema{
			"events": Arr(Obj(map[string]Schema{
				"type": webhookEvent, "description": Str(), "schema": Schema{"type": "object"}, "example": Schema{"type": "object"},
			}, "type", "description", "schema", "example")),
		}, "events"),
		"EventPoll": Obj(map[string]Schema{
			"events": Arr(eventPayloads()),
			"next_after": Schema{"anyOf": []any{Str(), Schema{"type": "null"}},
				"description": "pass as after to continue: the last event read (also one the types filter left out)"},
			"lost": Obj(map[string]Schema{
				"last_event_id": Str(), "retention_seconds": Int(), "retention_events": Int(), "message": Str(),
			}, "last_event_id", "retention_seconds", "retention_events", "message"),
		}, "events", "next_after"),
	}
	for _, e := range WebhookEvents {
		out[e.SchemaName()] = e.Payload()
	}
	return out
}()

// eventPayloads is any event's payload, as a webhook delivery of it carries it.
func eventPayloads() Schema {
	refs := make([]any, 0, len(WebhookEvents))
	for _, e := range WebhookEvents {
		refs = append(refs, Ref(e.SchemaName()))
	}
	return Schema{"oneOf": refs}
}

// lastEventID is how a stream resumes.
var lastEventID = []Param{{Name: "Last-Event-ID", Schema: StrMax(64),
	Description: "resume after this event id (sent by EventSource when it reconnects)"}}

// streamQuery are the query parameters of the owner's event stream and its long poll.
var streamQuery = []Param{
	{Name: "types", Schema: Str(), Description: "comma-separated events to receive (default all): identifier, claim_verified, context_source, context_updated, message, decision"},
	{Name: "last_event_id", Schema: StrMax(64), Description: "as the Last-Event-ID header, for a first connection that cannot set it"},
	{Name: "after", Schema: StrMax(64), Description: "long poll: answer JSON with the events after this event id"},
	{Name: "wait", Schema: Schema{"type": "string", "pattern": "^[0-9]+(ms|s)?$"}, Description: "long poll: wait up to this long (at most 30s) for a first event"},
}
