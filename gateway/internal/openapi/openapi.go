// Package openapi builds the OpenAPI 3.1 document of the routes the gateway serves, from the
// same route table that drives routing and authentication, so the two cannot drift apart.
package openapi

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/svcdev/svc/gateway/internal/routes"
)

// Version is the interface version of the spec.
const Version = "1.0.0"

// Build returns the document as a JSON-ready value.
func Build(served []routes.Route, baseURL string) map[string]any {
	paths := map[string]map[string]any{}
	for _, r := range served {
		if paths[r.Path] == nil {
			paths[r.Path] = map[string]any{}
		}
		paths[r.Path][strings.ToLower(r.Method)] = operation(r)
	}
	return map[string]any{
		"openapi":           "3.1.0",
		"jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
		"info": map[string]any{
			"title":   "svc",
			"version": Version,
			"description": "Durable public identities, mailboxes and relationship memory for people, projects, companies, tokens and agents. " +
				"MCP clients connect to " + baseURL + "/mcp (Streamable HTTP, stateless), whose tools call these routes with the same keys, scopes and limits.",
			"x-mcp": map[string]any{"url": baseURL + "/mcp", "transport": "streamable-http"},
		},
		"servers":  []any{map[string]any{"url": baseURL}},
		"paths":    paths,
		"webhooks": webhooks(),
		"components": map[string]any{
			"schemas": routes.Schemas(),
			"securitySchemes": map[string]any{
				"apiKey": map[string]any{"type": "http", "scheme": "bearer",
					"description": "The owner key (svc_sk_…) or a scoped sub-key (ksvc_…) of an object."},
			},
		},
	}
}

func operation(r routes.Route) map[string]any {
	op := map[string]any{
		"operationId": operationID(r),
		"summary":     r.Summary,
		"tags":        []string{r.Tag},
	}
	var params []any
	for _, name := range routes.PathParams(r.Path) {
		params = append(params, map[string]any{"name": name, "in": "path", "required": true, "schema": routes.Str()})
	}
	for _, group := range []struct {
		in   string
		list []routes.Param
	}{{"query", r.Query}, {"header", headers(r)}} {
		for _, q := range group.list {
			p := map[string]any{"name": q.Name, "in": group.in, "required": q.Required, "schema": q.Schema}
			if q.Description != "" {
				p["description"] = q.Description
			}
			params = append(params, p)
		}
	}
	if params != nil {
		op["parameters"] = params
	}
	if r.Auth == routes.Public {
		op["security"] = []any{map[string]any{}, map[string]any{"apiKey": []any{}}}
	} else {
		op["security"] = []any{map[string]any{"apiKey": []any{}}}
	}
	if r.Request != "" {
		op["requestBody"] = map[string]any{"required": true, "content": map[string]any{
			"application/json": map[string]any{"schema": routes.Ref(r.Request)},
		}}
	}
	ct := cmp.Or(r.ContentType, "application/json")
	success := map[string]any{"description": "success"}
	if r.Response != "" {
		success["content"] = map[string]any{ct: map[string]any{"schema": routes.Ref(r.Response)}}
	}
	if r.Stream {
		content, _ := success["content"].(map[string]any)
		if content == nil {
			content = map[string]any{}
		}
		content["text/event-stream"] = map[string]any{"schema": routes.Ref("Text")}
		success["content"] = content
		success["description"] = "an event stream (text/event-stream: retry:, then id:/event:/data: per event, with a comment as heartbeat; " +
			"an event named lost when the resume point is past retention)" + map[bool]string{true: ", or the long poll's JSON", false: ""}[ct == "application/json"]
	}
	responses := map[string]any{strconv.Itoa(r.SuccessStatus()): success}
	for status, desc := range errorResponses(r) {
		responses[status] = map[string]any{"description": desc, "content": map[string]any{
			"application/json": map[string]any{"schema": routes.Ref("Error")},
		}}
	}
	if r.Cacheable {
		responses["304"] = map[string]any{"description": "not modified: If-None-Match holds the current ETag"}
	}
	if r.Feed {
		responses["304"] = map[string]any{"description": "not modified: the If-None-Match ETag is current (not counted as a poll)"}
		responses["429"].(map[string]any)["description"] = "polled again within the poll interval: wait Retry-After seconds"
	}
	if strings.HasPrefix(ct, "text/html") {
		// A page's own not-found answer is a page too; the gateway's errors stay JSON.
		responses["404"].(map[string]any)["content"].(map[string]any)[ct] = map[string]any{"schema": routes.Ref("Text")}
	}
	op["responses"] = responses
	return op
}

// headers are the request headers a route reads: its own, and If-None-Match on cacheable reads.
func headers(r routes.Route) []routes.Param {
	if !r.Cacheable {
		return r.Headers
	}
	return append(slices.Clone(r.Headers), routes.Param{Name: "If-None-Match", Schema: routes.Str(),
		Description: "the ETag of an earlier answer: 304 Not Modified while it is still current"})
}

func errorResponses(r routes.Route) map[string]string {
	out := map[string]string{
		"400": "invalid request", "404": "not found", "429": "rate limited", "503": "unavailable",
	}
	if r.Auth != routes.Public {
		out["401"] = "missing or invalid API key"
		out["403"] = "the key does not own the object or lacks a scope"
	} else {
		out["401"] = "an API key was presented and is invalid"
	}
	out["413"] = "body too large"
	for _, status := range r.Errors {
		out[strconv.Itoa(status)] = errorDescriptions[status]
	}
	return out
}

var errorDescriptions = map[int]string{
	402: "payment required", 403: "forbidden", 409: "conflict", 410: "gone", 412: "precondition failed (a stale If-Match)", 422: "unprocessable",
}

// operationID is method + path in camel case, for example postApiObjectsHashRotateKey.
func operationID(r routes.Route) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(r.Method))
	for _, part := range strings.FieldsFunc(r.Path, func(c rune) bool { return c == '/' || c == '-' || c == '.' || c == '{' || c == '}' || c == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// webhooks documents what the service posts to a webhook (OpenAPI 3.1 webhooks): one operation
// per event, whose body is the event's payload schema, the same one the catalog serves.
func webhooks() map[string]any {
	headers := []any{
		header("webhook-id", "the event id: the same id as the event stream's id, for dedupe"),
		header("webhook-timestamp", "seconds since the epoch when the attempt was signed"),
		header("webhook-signature", "v1,<base64 HMAC-SHA256 of id.timestamp.body> per signing secret, space-separated (Standard Webhooks)"),
		header("x-svc-event", "the event type"),
	}
	out := map[string]any{}
	for _, e := range routes.WebhookEvents {
		out[e.Type] = map[string]any{"post": map[string]any{
			"operationId": "webhook" + strings.TrimPrefix(e.SchemaName(), "Event"),
			"summary":     e.Description,
			"tags":        []string{"webhooks"},
			"parameters":  headers,
			"requestBody": map[string]any{"required": true, "content": map[string]any{
				"application/json": map[string]any{"schema": routes.Ref(e.SchemaName()), "example": e.Example},
			}},
			"responses": map[string]any{
				"200": map[string]any{"description": "any 2xx acknowledges the delivery; 410 disables the webhook; anything else is retried"},
			},
		}}
	}
	return out
}

func header(name, description string) map[string]any {
	return map[string]any{"name": name, "in": "header", "required": true, "description": description, "schema": routes.Str()}
}
