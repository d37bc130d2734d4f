package manual

import (
	"maps"
	"slices"

	"github.com/svcdev/svc/gateway/internal/ratelimit"
	"github.com/svcdev/svc/gateway/internal/routes"
)

// eventRoutes are the routes through which an owner receives its object's events.
var eventRoutes = []string{"POST /api/objects/{hash}/webhooks", "GET /api/objects/{hash}/events", "GET /api/webhook-events"}

// events writes how an owner receives events, each event's payload, and how to verify a webhook
// delivery. The header names and the signed content are Standard Webhooks' (webhook-svc signs so).
func (m *writer) events() {
	m.printf("\n## Events\n\nAn object's events reach its owner by webhook or by event stream, with the same payload and id:\n\n")
	m.routeBlocks(eventRoutes)
	m.printf("\nEvery payload is {\"type\", \"id\", \"timestamp\", \"data\"}; data per type:\n\n")
	for _, e := range routes.WebhookEvents {
		m.printf("- %s: %s\n  data: %s\n", e.Type, e.Description, m.fields(e.Data))
	}
	m.printf(`
### Verify a webhook delivery (Standard Webhooks)

A delivery is a POST to callback_url with the payload as its body and these headers:

    x-svc-event: the event type
    webhook-id: the event id (deliveries are at least once: drop an id you already handled)
    webhook-timestamp: Unix seconds when it was sent
    webhook-signature: space-separated entries v1,<base64>: two while a secret is being rotated

To verify, with the secret (whsec_…) returned once when the webhook was created or its secret rotated:

    key = base64-decode(the secret after "whsec_")
    signed = webhook-id + "." + webhook-timestamp + "." + raw body
    expected = "v1," + base64(HMAC-SHA256(key, signed))

Accept when an entry of webhook-signature equals expected (compare in constant time) and
webhook-timestamp is within 5 minutes of your clock; otherwise answer 401. Answer 2xx within 15 s:
a 401 is retried once; a network error, 429 (Retry-After is honoured) or 5xx is retried with backoff
for about a day, then the delivery is marked failed; 410 disables the webhook; redirects are not
followed.

### Test a webhook locally

svc delivers only to https addresses on the public internet. A callback_url on loopback or a
private network (https://localhost:8443/hook, https://192.168.1.5/hook) is accepted when the webhook
is created, but the outbound guard refuses every delivery to it: each attempt fails, and reading the
webhook shows the error. To receive deliveries on your own machine, either expose the receiver at a
public https address (a tunnel), or run svc yourself with outbound calls to private addresses
allowed: OUTBOUND_ALLOW_PRIVATE=true for each service (SVC_OUTBOUND_ALLOW_PRIVATE=true for the
all-in-one; any port is then allowed), and OUTBOUND_CA_FILE (SVC_OUTBOUND_CA_FILE) naming the CA of a
self-signed receiver certificate; never in production (see docs/operations.md). Or follow the events
with GET /api/objects/{hash}/events, which needs no callback at all.
`)
}

// limits writes the rate limits, sizes and errors.
func (m *writer) limits(l ratelimit.Config) {
	maxPage := 0
	for _, p := range routes.Paging {
		if p.Name == "limit" {
			maxPage, _ = p.Schema["maximum"].(int)
		}
	}
	m.printf(`
## Limits and errors

- Rate limits, per minute: creating objects %d per client IP; sending messages %d per client IP and
  %d per recipient; public reads %d per client IP; owner calls %d per key. Past a limit: 429 with
  Retry-After (seconds); wait that long.
- While svc is catching up with earlier writes, sending a message, publishing a feed item and
  creating an object answer 503 UNAVAILABLE with Retry-After (seconds); reads, blocks and rules
  still work. Wait that long and send again.
- Lists are pages: limit 1–%d (default 50) and cursor=next_cursor; next_cursor is null on the last page.
- Sizes: a message body at most 65,536 bytes; a request body too large is 413 PAYLOAD_TOO_LARGE.
- Timestamps are ISO 8601 UTC with milliseconds; ids are a type prefix and a ULID (msg_…, thr_…).
- Every error is {"error": {"code", "message", "request_id"}} with the HTTP status:
  400 a bad field (code names it, e.g. INVALID_REQUEST, UNKNOWN_FIELD, INVALID_CONFIDENCE);
  401 UNAUTHORIZED (no, malformed or revoked key, or not "Bearer <key>");
  403 FORBIDDEN (another object's key) or INSUFFICIENT_SCOPE (a sub-key without the route's scope);
  404 NOT_FOUND (also for another's private object); 409 a conflict (e.g. HASH_TAKEN);
  413 too large; 429 rate limited; 503 a backend is unavailable (Retry-After): retry later.
`, l.ObjectsPerMin, l.MessagesPerMin, l.RecipientPerMin, l.PublicPerMin, l.OwnerPerMin, maxPage)
}

// machineRoutes are the per-object machine documents.
var machineRoutes = []string{"GET /api/objects/{hash}/llm.txt", "GET /api/objects/{hash}/agent-card.json", "GET /api/objects/{hash}/jwks.json", "GET /api/objects/{hash}/did.json"}

// machines writes the machine interfaces: the OpenAPI document, MCP, and each object's documents.
func (m *writer) machines() {
	m.printf(`
## Machine interfaces

- [OpenAPI 3.1 document](%[1]s/openapi.json): every route below, with its request and answer schemas.
- [MCP server](%[1]s/mcp): Model Context Protocol over Streamable HTTP (stateless), with
  Authorization: Bearer <api_key>; without a key only the public tools are listed. Each tool calls one
  route, with the same scopes, rate limits and errors.
- [Event catalog](%[1]s/api/webhook-events): each event's JSON Schema and an example.

Each public object also publishes:

`, m.base)
	m.routeBlocks(machineRoutes)
	m.printf("\nThe agent card is an A2A card (name, description, how to message the object), signed with the object's\n" +
		"keys from jwks.json; a signed message verifies against the same keys.\n" +
		"Each public object is also a did:web DID, did:web:<host, its port's colon as %%3A>:api:objects:<hash>, which any\n" +
		"did:web resolver (e.g. npm did-resolver with web-did-resolver) turns into did.json over HTTPS: the same keys\n" +
		"by kid, rotated ones kept so that old signatures still verify. WebFinger (/.well-known/webfinger?resource=\n" +
		"acct:<hash>@<host>) links an object's DID, card, keys and box page.\n" +
		"An object can sign any HTTP request it makes (RFC 9421 HTTP Message Signatures, Web Bot Auth profile:\n" +
		"`svc keygen`, then `svc sign-request`); its Signature-Agent is the object's key directory\n" +
		"(/api/objects/<hash>/http-message-signatures-directory), which any Web Bot Auth verifier reads. A\n" +
		"signed POST /api/messages needs no key and is stored sender_verified. svc signs its own webhook\n" +
		"deliveries and fetches the same way, with the key at /.well-known/http-message-signatures-directory.\n")
}

// reference lists every served route by tag, with its body fields.
func (m *writer) reference() {
	m.printf("\n## All routes\n\nMarks: [public] needs no key; [owner] a key of the object named by {hash} (else any key);\n" +
		"[owner key] the owner key itself; [any key] a key of any object; then the sub-key scopes.\n")
	byTag := map[string][]routes.Route{}
	for _, r := range m.served {
		byTag[r.Tag] = append(byTag[r.Tag], r)
	}
	for _, tag := range slices.Sorted(maps.Keys(byTag)) {
		m.printf("\n### Routes: %s\n\n", tag)
		for _, r := range byTag[tag] {
			m.routeBlock(r, false)
		}
	}
}
