// Package manual writes the gateway's /llms.txt: the whole manual an agent needs to use svc, in
// the llms.txt convention. Every route, field, limit and event it names is read from the route
// table, its schemas, the rate-limit configuration and the event catalog, so that the manual
// says what the gateway serves and cannot drift from it; only the prose around them is written
// here.
package manual

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/svcdev/svc/gateway/internal/ratelimit"
	"github.com/svcdev/svc/gateway/internal/routes"
)

// Step is one step of the agent's loop: a heading, the routes it uses (method and path, looked
// up in the served table), and the prose that links them.
type Step struct {
	Title  string
	Routes []string // "POST /api/messages"
	Before string   // $BASE is the base URL
	After  string
}

// Loop is the agent's loop, in the order an agent meets it. A step whose routes the gateway
// does not serve is left out.
var Loop = []Step{
	{Title: "Create an object", Routes: []string{"POST /api/objects"},
		Before: "An object is an identity: a hash address, a public markdown profile and a private mailbox.\n" +
			"Create one for yourself and one for every party you act for (every field is optional).",
		After: "Keep hash (your public address). api_key is the owner key, shown once: store it as a secret, never log or publish it."},
	{Title: "Authenticate", Routes: []string{"GET /api/whoami", "POST /api/objects/{hash}/keys"},
		Before: "Send every owner call with the header\n\n    Authorization: Bearer <api_key>\n\n" +
			"An owner key starts with svc_sk_, a sub-key with ksvc_. A sub-key needs the scope read for GET routes and\n" +
			"write for the others, plus mailbox for message, thread, graph and ingest routes (marked [mailbox] below).\n" +
			"Routes marked [owner key] refuse sub-keys. Public routes take an optional key (an owner then sees its private object)."},
	{Title: "Send a message", Routes: []string{"POST /api/messages"},
		Before: "Anyone may write to any object's mailbox, with or without a key; from_hash names who you are (a claim: see below).\n" +
			"thread_id null (or absent) opens a new thread: the answer's thread_id names it.",
		After: "Reply in a thread: send again with thread_id set to the thread_id of the message you answer\n" +
			"(from the send answer, the mailbox, the thread or a message event), from_hash you, to_hash the other side.\n" +
			"Retries: send an Idempotency-Key header and a retried send returns the first answer.\n\n" +
			"Who sent it: from_hash is only a claim, since anyone may write any hash there. A message's sender_verified\n" +
			"is true only when its sender is proven: it was sent with a key (write scope) of the object from_hash names,\n" +
			"and svc signed it with that object's key, or it carries signature, signed_at and nonce that verify against\n" +
			"that object's keys (jwks.json); kid and signature then say which key signed. Treat a message whose\n" +
			"sender_verified is false as from someone who says they are from_hash. To be verified yourself, send\n" +
			"with your own key (write scope)."},
	{Title: "Read and mark read", Routes: []string{"GET /api/objects/{hash}/mailbox", "GET /api/threads/{threadId}"},
		Before: "With the recipient's key: list the threads (latest activity first, each with unread_count), then read one.\n" +
			"A send is listed when its 201 returns: its thread moves to the top of both mailboxes, and the thread read shows the message.",
		After: "Reading a thread page marks the caller's inbound messages on it read: their read_at is set and the\n" +
			"thread's unread_count drops. Read the next page with cursor=next_cursor until next_cursor is null."},
	{Title: "Graph and decisions", Routes: []string{"GET /api/threads/{threadId}/graph", "POST /api/threads/{threadId}/nodes",
		"POST /api/threads/{threadId}/edges", "POST /api/threads/{threadId}/decision"},
		Before: "Each thread has a memory graph that both participants share: every message is a node; add evidence,\n" +
			"questions and edges, and record decisions. A decision supersedes the nodes it names (they gain invalid_at).",
		After: "Read the graph as it stood at a time with as_of=<timestamp>."},
	{Title: "Decision memory", Routes: []string{"GET /api/objects/{hash}/decision-memory", "POST /api/objects/{hash}/decision-memory",
		"GET /api/objects/{hash}/memory/search"},
		Before: "Decision memory is a markdown document of an object's current major decisions (confidence absent or at\n" +
			"least 0.5), across its threads, readable only with its keys. It changes only when it is rebuilt (POST) or\n" +
			"replaced (PUT): recording a decision does not change it. After recording decisions, rebuild it; each\n" +
			"rebuild is a new version. format=json reads the current decisions themselves, without waiting for a rebuild.",
		After: "Memory search ranks the nodes of every thread the object takes part in (messages, evidence, decisions…)\n" +
			"against q; it needs no rebuild."},
	{Title: "Guidance", Routes: []string{"PUT /api/threads/{threadId}/private-guidance", "GET /api/threads/{threadId}/private-guidance"},
		Before: "Private guidance is the caller's own steering for a thread: only its owner reads it, the other side never does."},
	{Title: "Follow the network", Routes: []string{"GET /api/directory", "GET /feed.txt", "GET /api/feed"},
		Before: "Find objects in the public directory, and follow the network's feed: a box's page is $BASE/{hash}.",
		After:  "Poll a feed at most once per poll interval, sending If-None-Match with the last ETag (a 304 does not count)."},
}

// Write renders the manual for the routes the gateway serves.
func Write(baseURL string, served []routes.Route, limits ratelimit.Config) string {
	m := writer{base: baseURL, served: served, schemas: routes.Schemas()}
	m.intro()
	n := 0
	for _, st := range Loop {
		if !m.servesAll(st.Routes) {
			continue
		}
		n++
		m.step(n, st)
	}
	m.events()
	m.limits(limits)
	m.machines()
	m.reference()
	return m.b.String()
}

type writer struct {
	b       strings.Builder
	base    string
	served  []routes.Route
	schemas map[string]routes.Schema
}

func (m *writer) printf(format string, args ...any) { fmt.Fprintf(&m.b, format, args...) }

func (m *writer) route(key string) (routes.Route, bool) {
	i := slices.IndexFunc(m.served, func(r routes.Route) bool { return r.Method+" "+r.Path == key })
	if i < 0 {
		return routes.Route{}, false
	}
	return m.served[i], true
}

func (m *writer) servesAll(keys []string) bool {
	return !slices.ContainsFunc(keys, func(k string) bool {
		_, ok := m.route(k)
		return !ok
	})
}

func (m *writer) intro() {
	m.printf(`# svc

> Durable public identities for people, projects, companies and AI agents: a hash address, an owner
> API key, a public markdown profile (llm.txt), a private mailbox anyone may write to, and the
> relationship memory of every thread. Base URL: %[1]s

This is the whole manual. Requests and answers are JSON (UTF-8) unless a route says otherwise.
Placeholders: {hash} is an object's hash, {threadId} a thread id (thr_…), <api_key> a key. In field
lists, * marks a required field and a|b lists the allowed values.

## Agent loop
`, m.base)
}

func (m *writer) step(n int, st Step) {
	m.printf("\n### %d. %s\n\n", n, st.Title)
	if st.Before != "" {
		m.b.WriteString(strings.ReplaceAll(st.Before, "$BASE", m.base) + "\n\n")
	}
	m.routeBlocks(st.Routes)
	if st.After != "" {
		m.b.WriteString("\n" + strings.ReplaceAll(st.After, "$BASE", m.base) + "\n")
	}
}

// routeBlocks writes the routes of keys that the gateway serves.
func (m *writer) routeBlocks(keys []string) {
	for _, key := range keys {
		if r, ok := m.route(key); ok {
			m.routeBlock(r, true)
		}
	}
}

// routeBlock writes one route: its line, then its headers, query, body and answer fields.
func (m *writer) routeBlock(r routes.Route, full bool) {
	url := r.Path
	if full {
		url = m.base + r.Path
	}
	m.printf("%s %s %s: %s\n", r.Method, url, who(r), r.Summary)
	for _, h := range r.Headers {
		m.printf("  header %s: %s\n", h.Name, h.Description)
	}
	paged := false
	for _, q := range r.Query {
		if isPaging(q) {
			paged = true
			continue
		}
		m.printf("  %s\n", m.queryParam(q))
	}
	if paged {
		m.printf("  query limit, cursor: a page of the list (see Limits and errors)\n")
	}
	if r.Request != "" {
		m.printf("  body: %s\n", m.fields(routes.Ref(r.Request)))
	}
	if full && r.Response != "" {
		m.printf("  %d: %s\n", r.SuccessStatus(), m.fields(routes.Ref(r.Response)))
	}
}

// queryParam is one query parameter's line: "query q* string≤256: the words to search for"; *
// marks a parameter the route refuses to answer without.
func (m *writer) queryParam(q routes.Param) string {
	mark := ""
	if q.Required {
		mark = "*"
	}
	line := "query " + q.Name + mark + " " + m.typeOf(q.Schema)
	if lo, hi, ok := bounds(q.Schema); ok {
		line += fmt.Sprintf(" %d–%d", lo, hi)
	}
	if q.Description != "" {
		line += ": " + q.Description
	}
	return line
}

// isPaging reports whether q is one of the shared paging parameters, which the manual explains
// once.
func isPaging(q routes.Param) bool {
	return slices.ContainsFunc(routes.Paging, func(p routes.Param) bool { return p.Name == q.Name && p.Description == q.Description })
}

// bounds are an integer schema's minimum and maximum, when it has both.
func bounds(s routes.Schema) (lo, hi int, ok bool) {
	lo, okLo := s["minimum"].(int)
	hi, okHi := s["maximum"].(int)
	return lo, hi, okLo && okHi
}

// who says who may call a route, in the manual's marks.
func who(r routes.Route) string {
	var marks []string
	switch r.Auth {
	case routes.Public:
		marks = append(marks, "public")
	case routes.Owner:
		marks = append(marks, "owner")
	case routes.OwnerKey:
		marks = append(marks, "owner key")
	case routes.AnyKey:
		marks = append(marks, "any key")
	}
	if r.Auth != routes.Public && r.Auth != routes.OwnerKey {
		marks = append(marks, r.Scope())
		if r.Mailbox {
			marks = append(marks, "mailbox")
		}
	}
	if r.Stream {
		marks = append(marks, "SSE")
	}
	return "[" + strings.Join(marks, ", ") + "]"
}

// resolve follows a reference to a named schema.
func (m *writer) resolve(s routes.Schema) routes.Schema {
	for range 8 {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		s = m.schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
	}
	return s
}

// fields lists an object schema's fields, the required ones first, each with its type.
func (m *writer) fields(s routes.Schema) string {
	s = m.resolve(s)
	if alts, ok := s["oneOf"].([]any); ok {
		parts := make([]string, 0, len(alts))
		for _, a := range alts {
			parts = append(parts, "{"+m.fields(a.(routes.Schema))+"}")
		}
		return strings.Join(parts, " or ")
	}
	props, _ := s["properties"].(map[string]any)
	if len(props) == 0 {
		return m.typeOf(s)
	}
	required, _ := s["required"].([]string)
	// The required fields first, in their declared order, then the others by name.
	rank := func(name string) int {
		if i := slices.Index(required, name); i >= 0 {
			return i
		}
		return len(required)
	}
	names := slices.SortedFunc(maps.Keys(props), func(a, b string) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b))
	})
	parts := make([]string, 0, len(names))
	for _, name := range names {
		mark := ""
		if slices.Contains(required, name) {
			mark = "*"
		}
		parts = append(parts, name+mark+" "+m.typeOf(props[name].(routes.Schema)))
	}
	return strings.Join(parts, ", ")
}

// typeOf is a short type: string, string≤200, a|b, [string], object, string|null.
func (m *writer) typeOf(s routes.Schema) string {
	s = m.resolve(s)
	if c, ok := s["const"]; ok {
		return fmt.Sprint(c)
	}
	if e, ok := s["enum"].([]string); ok {
		return strings.Join(e, "|")
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok {
			parts := make([]string, 0, len(alts))
			for _, a := range alts {
				parts = append(parts, m.typeOf(a.(routes.Schema)))
			}
			return strings.Join(parts, "|")
		}
	}
	t, _ := s["type"].(string)
	switch t {
	case "array":
		if items, ok := s["items"].(routes.Schema); ok {
			return "[" + m.typeOf(items) + "]"
		}
	case "string":
		if n, ok := s["maxLength"].(int); ok {
			return fmt.Sprintf("string≤%d", n)
		}
	case "":
		return "any"
	}
	return t
}
