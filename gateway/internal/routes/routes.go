// Package routes is the gateway's one declarative route table. Each row names the method and
// path of the public API, the service that serves it, who may call it and the shapes it takes and
// returns; routing, authentication, scope checks and the OpenAPI document are all driven by it.
package routes

import (
	"cmp"
	"maps"
	"slices"
)

// Auth says who may call a route.
type Auth int

const (
	// Public needs no key. A key, when presented, is still verified (401 if bad) and passed on,
	// so that an owner can read its own private object through public routes.
	Public Auth = iota
	// Owner needs a key of the object named by {hash} (or, on routes without {hash}, any key;
	// the service checks what the caller may see). Sub-keys need the route's scope.
	Owner
	// OwnerKey needs the owner key itself, never a sub-key.
	OwnerKey
	// AnyKey needs a key of any object (sub-keys with the route's scope); {hash} names another
	// object the caller acts on, and the service decides what the caller may do with it.
	AnyKey
)

// Route is one row of the table.
type Route struct {
	Method  string
	Path    string // OpenAPI form: /api/objects/{hash}
	Service string // audience and upstream: identity-svc, context-svc, mailbox-svc, …
	Auth    Auth
	// Mailbox marks routes that sub-keys may call only with the mailbox scope, in addition to
	// read (GET) or write (other methods).
	Mailbox bool
	// Ingress marks public ingress routes rate limited per client IP (POST /api/objects, POST
	// /api/messages); Recipient names the body field limited per recipient.
	Ingress   bool
	Recipient string
	// Backpressure marks the public writes whose effects reach readers through the event-fed
	// projections (a message, a feed item, a new object): the gateway refuses them with 503 and
	// Retry-After while a consumer group is more than LAG_LIMIT behind (see proxy.Freshness),
	// so that the backlog, and the time a write takes to show, stop growing. Reads and owners'
	// controls are never held back.
	Backpressure bool
	// Feed marks feed polling routes: a client reads a feed's first page at most once per poll
	// interval; a 304 does not count (see ratelimit.Poller).
	Feed bool
	// Cacheable marks public reads answered with ETag and Cache-Control, and 304 Not Modified to
	// an If-None-Match that holds the current ETag.
	Cacheable bool
	// Stream marks event streams (SSE) and their long polls: held open, capped per key (per
	// client IP when public) and per replica instead of polled (see ratelimit.Streams).
	Stream bool

	Summary string
	Tag     string
	// Request is the schema name of the JSON body, or "".
	Request string
	// Query lists the query parameters, each with its schema; Headers the request headers the
	// route reads beyond Authorization.
	Query   []Param
	Headers []Param
	// Status is the success status (200 when zero); Response the schema name of its body, and
	// ContentType its media type (application/json when empty).
	Status      int
	Response    string
	ContentType string
	// Errors are the statuses the route may answer beyond those every route may (400, 401, 403,
	// 404, 413, 429, 503), for example 402 or 409.
	Errors []int
}

// Gateway is the Service of the routes the gateway answers itself (the event catalog), still
// through the same admission as every other route.
const Gateway = "gateway"

// Param is a query parameter or a request header.
type Param struct {
	Name        string
	Schema      Schema
	Description string
	Required    bool
}

// Scope is the scope a sub-key needs for the route.
func (r Route) Scope() string {
	if r.Method == "GET" {
		return "read"
	}
	return "write"
}

// SuccessStatus is the route's success status.
func (r Route) SuccessStatus() int { return cmp.Or(r.Status, 200) }

// All is the whole table: every service's routes.
func All() []Route {
	return slices.Concat(Identity, Signing, Context, Mailbox, A2A, Graph, Claims, Feed, Webhook, Events)
}

// Schemas is every named schema of the table.
func Schemas() map[string]Schema {
	out := map[string]Schema{}
	for _, m := range []map[string]Schema{CommonSchemas, IdentitySchemas, SigningSchemas, ContextSchemas, MailboxSchemas, A2ASchemas, GraphSchemas, ClaimsSchemas, FeedSchemas, WebhookSchemas, EventSchemas} {
		maps.Copy(out, m)
	}
	return out
}
