package routes

// Webhook are webhook-svc's routes.
var Webhook = []Route{
	{Method: "POST", Path: "/api/objects/{hash}/webhooks", Service: "webhook-svc", Auth: Owner,
		Summary: "Create a webhook on the object's events; the whsec_ signing secret is shown once", Tag: "webhooks",
		Request: "CreateWebhook", Status: 201, Response: "Webhook", Errors: []int{409}},
	{Method: "GET", Path: "/api/objects/{hash}/webhooks", Service: "webhook-svc", Auth: Owner,
		Summary: "List the object's webhooks", Tag: "webhooks", Response: "WebhookList", Query: Paging},
	{Method: "GET", Path: "/api/objects/{hash}/webhooks/{subscription_id}", Service: "webhook-svc", Auth: Owner,
		Summary: "Read a webhook with its health and recent deliveries", Tag: "webhooks", Response: "WebhookStatus"},
	{Method: "PATCH", Path: "/api/objects/{hash}/webhooks/{subscription_id}", Service: "webhook-svc", Auth: Owner,
		Summary: "Change a webhook's callback, events or stored headers (header values are never returned), or enable or disable it", Tag: "webhooks",
		Request: "UpdateWebhook", Response: "Webhook"},
	{Method: "DELETE", Path: "/api/objects/{hash}/webhooks/{subscription_id}", Service: "webhook-svc", Auth: Owner,
		Summary: "Delete a webhook", Tag: "webhooks", Response: "Deleted"},
	{Method: "POST", Path: "/api/objects/{hash}/webhooks/{subscription_id}/rotate-secret", Service: "webhook-svc", Auth: Owner,
		Summary: "Give a webhook a new secret, shown once; the previous one keeps signing for 24 hours", Tag: "webhooks",
		Response: "Webhook"},
	{Method: "POST", Path: "/api/objects/{hash}/webhooks/{subscription_id}/deliveries/{delivery_id}/replay", Service: "webhook-svc",
		Auth: Owner, Summary: "Send one delivery again, signed with the current secret", Tag: "webhooks",
		Status: 202, Response: "Delivery"},
	{Method: "GET", Path: "/api/objects/{hash}/webhooks/{subscription_id}/attempts", Service: "webhook-svc", Auth: Owner,
		Summary: "Page a webhook's delivery attempts, newest first, filtered by outcome and time", Tag: "webhooks",
		Response: "AttemptList", Query: append([]Param{
			{Name: "outcome", Schema: Enum("succeeded", "failed")},
			{Name: "since", Schema: DateTime()}, {Name: "until", Schema: DateTime()},
		}, Paging...)},
	{Method: "GET", Path: "/api/objects/{hash}/webhooks/{subscription_id}/attempt-counts", Service: "webhook-svc", Auth: Owner,
		Summary: "Count a webhook's attempts by outcome over a window (the last 24 hours by default)", Tag: "webhooks",
		Response: "AttemptCounts", Query: []Param{{Name: "since", Schema: DateTime()}, {Name: "until", Schema: DateTime()}}},
	{Method: "POST", Path: "/api/objects/{hash}/webhooks/{subscription_id}/recover", Service: "webhook-svc", Auth: Owner,
		Summary: "Send again, once, every delivery that failed since a time, signed with the current secret", Tag: "webhooks",
		Request: "RecoverDeliveries", Status: 202, Response: "Recovery"},
	{Method: "GET", Path: "/api/objects/{hash}/context-subscriptions", Service: "webhook-svc", Auth: Owner,
		Summary: "List the context subscriptions to the owner's box, whoever holds them", Tag: "webhooks",
		Response: "ContextSubscriptionList", Query: Paging},
	{Method: "POST", Path: "/api/objects/{hash}/context-subscriptions", Service: "webhook-svc", Auth: AnyKey,
		Summary: "Subscribe to the context updates of the box {hash}, with the key of any object", Tag: "webhooks",
		Request: "CreateContextSubscription", Status: 201, Response: "ContextSubscription", Errors: []int{409}},
	{Method: "DELETE", Path: "/api/objects/{hash}/context-subscriptions", Service: "webhook-svc", Auth: AnyKey,
		Summary: "Delete a context subscription, with the key of the object that created it or of the box", Tag: "webhooks",
		Query:    []Param{{Name: "subscription_id", Schema: Str(), Required: true}},
		Response: "Deleted"},
}

var (
	webhookEvent  = Enum("identifier", "claim_verified", "context_source", "context_updated", "message", "decision")
	webhookFields = map[string]Schema{
		"id": Str(), "hash": Str(), "callback_url": Str(), "events": Arr(webhookEvent),
		"header_names": Arr(Str()), "created_at": DateTime(), "updated_at": DateTime(),
		"secret": Schema{"type": "string", "pattern": "^whsec_", "description": "shown once, at creation and rotation"},
	}
	webhookRequired = []string{"id", "hash", "callback_url", "events", "header_names", "created_at", "updated_at"}
	callbackURL     = Schema{"type": "string", "format": "uri", "pattern": "^https://", "maxLength": 2048}
)

// WebhookSchemas are the shapes of webhook-svc's routes.
var WebhookSchemas = map[string]Schema{
	"CreateWebhook": Schema{"type": "object", "additionalProperties": false, "required": []string{"callback_url"},
		"properties": map[string]any{"callback_url": callbackURL, "events": Arr(webhookEvent)}},
	"UpdateWebhook": Schema{"type": "object", "additionalProperties": false,
		"properties": map[string]any{
			"callback_url": callbackURL, "events": Arr(webhookEvent),
			"headers": Schema{"type": "object", "additionalProperties": Str(), "maxProperties": 20,
				"description": "replaces the stored headers; sent on every delivery, never returned"},
			"enabled": Schema{"type": "boolean",
				"description": "true enables a disabled webhook with a clean health record; false disables it"},
		}},
	"Webhook":     Obj(webhookFields, webhookRequired...),
	"WebhookList": Obj(map[string]Schema{"webhooks": Arr(Ref("Webhook")), "next_cursor": Nullable(Str())}, "webhooks", "next_cursor"),
	"WebhookStatus": Obj(with(webhookFields, map[string]Schema{
		"health": Obj(map[string]Schema{
			"status": Enum("enabled", "disabled"), "disabled_reason": Nullable(Str()), "last_success_at": Nullable(DateTime()),
			"last_failure_at": Nullable(DateTime()), "failing_since": Nullable(DateTime()),
		}, "status", "disabled_reason", "last_success_at", "last_failure_at", "failing_since"),
		"deliveries": Arr(Ref("Delivery")),
	}), append([]string{"health", "deliveries"}, webhookRequired...)...),
	"Delivery": Obj(map[string]Schema{
		"id": Str(), "event_id": Str(), "event": webhookEvent, "status": Enum("pending", "succeeded", "failed"),
		"attempts": Arr(Obj(map[string]Schema{
			"at": DateTime(), "status_code": Nullable(Int()), "error": Nullable(Str()), "duration_ms": Int(),
		}, "at", "status_code", "error", "duration_ms")),
		"next_attempt_at": Nullable(DateTime()), "replay_of": Nullable(Str()), "created_at": DateTime(),
	}, "id", "event_id", "event", "status", "attempts", "next_attempt_at", "replay_of", "created_at"),
	"CreateContextSubscription": Schema{"type": "object", "additionalProperties": false, "required": []string{"callback_url"},
		"properties": map[string]any{"callback_url": callbackURL, "events": Arr(Enum("context_updated"))}},
	"ContextSubscription": Obj(map[string]Schema{
		"subscription": Obj(map[string]Schema{
			"id": Str(), "hash": Str(), "callback_url": Str(), "events": Arr(Enum("context_updated")),
			"secret": webhookFields["secret"], "created_at": DateTime(),
		}, "id", "hash", "callback_url", "events", "secret", "created_at"),
	}, "subscription"),
	"AttemptList": Obj(map[string]Schema{
		"attempts": Arr(Obj(map[string]Schema{
			"delivery_id": Str(), "event_id": Str(), "event": webhookEvent, "attempt": Int(),
			"outcome": Enum("succeeded", "retrying", "failed"), "status_code": Nullable(Int()), "error": Nullable(Str()),
			"duration_ms": Int(), "at": DateTime(),
		}, "delivery_id", "event_id", "event", "attempt", "outcome", "status_code", "error", "duration_ms", "at")),
		"next_cursor": Nullable(Str()),
	}, "attempts", "next_cursor"),
	"AttemptCounts": Obj(map[string]Schema{
		"since": DateTime(), "until": DateTime(), "attempts": Int(), "succeeded": Int(), "failed": Int(),
	}, "since", "until", "attempts", "succeeded", "failed"),
	"RecoverDeliveries": Schema{"type": "object", "additionalProperties": false, "required": []string{"since"},
		"properties": map[string]any{"since": DateTime()}},
	"Recovery": Obj(map[string]Schema{"recovered": Int(), "more": Bool(), "next_since": Nullable(DateTime())},
		"recovered", "more", "next_since"),
	"ContextSubscriptionList": Obj(map[string]Schema{
		"subscriptions": Arr(Obj(map[string]Schema{
			"id": Str(), "watcher_hash": Str(), "callback_host": Str(), "events": Arr(Enum("context_updated")), "created_at": DateTime(),
		}, "id", "watcher_hash", "callback_host", "events", "created_at")),
		"next_cursor": Nullable(Str()),
	}, "subscriptions", "next_cursor"),
	"Deleted": Obj(map[string]Schema{"ok": Bool(), "deleted": Str()}, "ok", "deleted"),
}
