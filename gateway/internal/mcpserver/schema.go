package mcpserver

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/svcdev/svc/gateway/internal/routes"
)

// argName is the tool argument that fills a path parameter: the route's name in snake case
// (threadId → thread_id), the spelling of every other argument.
func argName(param string) string {
	var b strings.Builder
	for i, r := range param {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// idempotencyArg is the argument that overrides the content-derived Idempotency-Key of a route
// that reads that header.
const idempotencyArg = "idempotency_key"

// selfFields are body fields that default to the caller's own hash. A caller without a key has no
// own hash: for it they stay required (see anonymous).
var selfFields = map[string]bool{"from_hash": true}

// inputSchema is the tool's JSON Schema for a caller with a key: the route's path parameters,
// query parameters and body fields as one flat object, required where the route requires them
// and the tool has no default.
func inputSchema(t Tool, r routes.Route, named map[string]routes.Schema) (routes.Schema, error) {
	return flatSchema(t, r, named, true)
}

// anonymousInputSchema is the tool's JSON Schema for a caller without a key, or nil when it is
// the same as inputSchema's: the fields that default to the caller's own hash have no default
// then, so that they are as required as the route makes them.
func anonymousInputSchema(t Tool, r routes.Route, named map[string]routes.Schema) (routes.Schema, error) {
	if r.Request == "" {
		return nil, nil
	}
	props, _ := named[r.Request]["properties"].(map[string]any)
	for name := range selfFields {
		if _, ok := props[name]; ok {
			return flatSchema(t, r, named, false)
		}
	}
	return nil, nil
}

// flatSchema builds the input schema; keyed says whether the caller has a key (an own hash that
// selfFields default to).
func flatSchema(t Tool, r routes.Route, named map[string]routes.Schema, keyed bool) (routes.Schema, error) {
	props := map[string]any{}
	var required []string
	add := func(name string, s any, req bool) error {
		if _, dup := props[name]; dup {
			return fmt.Errorf("tool %s: argument %s is both a path, query or body field", t.Name, name)
		}
		props[name] = s
		if req {
			required = append(required, name)
		}
		return nil
	}
	for _, p := range routes.PathParams(r.Path) {
		s := routes.Schema{"type": "string", "minLength": 1, "maxLength": 200}
		own := p == "hash" && t.OwnHash
		if own {
			s["description"] = "an object hash (svc_...); defaults to your own"
		}
		if err := add(argName(p), s, !own); err != nil {
			return nil, err
		}
	}
	for _, q := range r.Query {
		s := inline(q.Schema, named).(routes.Schema)
		if q.Description != "" {
			s["description"] = q.Description
		}
		if err := add(q.Name, s, q.Required); err != nil {
			return nil, err
		}
	}
	if r.Request != "" {
		body, ok := named[r.Request]
		if !ok {
			return nil, fmt.Errorf("tool %s: the route's request schema %s is undefined", t.Name, r.Request)
		}
		body = inline(body, named).(routes.Schema)
		bodyProps, _ := body["properties"].(map[string]any)
		bodyRequired, _ := body["required"].([]string)
		for _, name := range sortedKeys(bodyProps) {
			s := bodyProps[name].(routes.Schema)
			_, hasDefault := t.Defaults[name]
			if hasDefault {
				s["default"] = t.Defaults[name]
			}
			self := selfFields[name] && keyed
			switch {
			case self:
				s["description"] = "your object's hash unless given"
			case selfFields[name]:
				s["description"] = "who you are (an object hash, svc_...): required without a key, since there is no own hash to default to; a claim only, unless the message is signed (see sender_verified)"
			}
			req := slices.Contains(bodyRequired, name) && !hasDefault && !self
			if err := add(name, s, req); err != nil {
				return nil, err
			}
		}
	}
	for _, h := range r.Headers {
		if h.Name == "Idempotency-Key" {
			s := inline(h.Schema, named).(routes.Schema)
			s["description"] = "leave out: the call derives one from its content, so that a retry never acts twice; set a fresh value to repeat the same content on purpose"
			if err := add(idempotencyArg, s, false); err != nil {
				return nil, err
			}
		}
	}
	out := routes.Schema{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		out["required"] = required
	}
	return out, nil
}

// textOutput is the output schema of the routes that answer text (llm.txt).
var textOutput = routes.Schema{"type": "object", "additionalProperties": false, "required": []string{"text"},
	"properties": map[string]any{"text": routes.Schema{"type": "string"}}}

// outputSchema is the route's response schema with its references inlined; a text response is
// wrapped as {"text": …}, since MCP's structured content is a JSON object.
func outputSchema(t Tool, r routes.Route, named map[string]routes.Schema) (routes.Schema, error) {
	if isText(r) {
		return textOutput, nil
	}
	s, ok := named[r.Response]
	if !ok {
		return nil, fmt.Errorf("tool %s: the route's response schema %q is undefined", t.Name, r.Response)
	}
	out := inline(s, named).(routes.Schema)
	if alts, ok := out["anyOf"].([]any); ok && allObjects(alts) {
		// One route, several object shapes (decision memory's markdown, one version, or its
		// decisions with format=json): still a JSON object, in exactly one of the shapes.
		out = routes.Schema{"type": "object", "anyOf": alts}
	}
	if out["type"] != "object" {
		return nil, fmt.Errorf("tool %s: the route's response %s is not a JSON object", t.Name, r.Response)
	}
	return out, nil
}

// isText reports whether the route answers something other than JSON.
func isText(r routes.Route) bool {
	return r.ContentType != "" && !strings.HasPrefix(r.ContentType, "application/json")
}

const refPrefix = "#/components/schemas/"

// inline copies s, replacing every reference to a named schema of the table by that schema:
// a tool's schemas stand alone, outside the OpenAPI document. The table has no recursive schema;
// depth bounds a mistake that would add one.
func inline(s any, named map[string]routes.Schema) any { return inlineDepth(s, named, 0) }

func inlineDepth(s any, named map[string]routes.Schema, depth int) any {
	if depth > 32 {
		panic("mcpserver: schema references nest deeper than 32 levels")
	}
	switch v := s.(type) {
	case map[string]any:
		if ref, ok := v["$ref"].(string); ok && strings.HasPrefix(ref, refPrefix) {
			target, ok := named[strings.TrimPrefix(ref, refPrefix)]
			if !ok {
				panic("mcpserver: undefined schema " + ref)
			}
			return inlineDepth(target, named, depth+1)
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = inlineDepth(e, named, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = inlineDepth(e, named, depth+1)
		}
		return out
	case []string:
		return slices.Clone(v)
	default:
		return v
	}
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// allObjects reports whether every schema of alts describes a JSON object.
func allObjects(alts []any) bool {
	for _, a := range alts {
		if m, ok := a.(routes.Schema); !ok || m["type"] != "object" {
			return false
		}
	}
	return len(alts) > 0
}
