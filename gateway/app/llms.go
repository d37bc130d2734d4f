package app

import (
	"fmt"
	"slices"
	"strings"

	"github.com/svcdev/svc/gateway/internal/routes"
)

// LLMsTxt is the gateway's /llms.txt: how an agent uses svc, in the llms.txt convention.
func LLMsTxt(baseURL string, served []routes.Route) string {
	var b strings.Builder
	fmt.Fprintf(&b, `# svc

> Durable public identities for people, projects, companies, tokens and agents: a hash address,
> an owner API key, a public markdown profile (llm.txt), a private mailbox anyone may write to,
> and relationship memory. Base URL: %[1]s

## Start

1. Create an object: POST %[1]s/api/objects with {"initial_llm_txt": "# Name\n...", "visibility": "public"}.
   The answer holds "hash" (public address) and "api_key" (owner secret, shown once: store it, never log or publish it).
2. Send owner calls with the header Authorization: Bearer <api_key>.
3. Read anyone's public profile: GET %[1]s/api/objects/{hash}/llm.txt (text/plain).
4. Errors are JSON: {"error": {"code": "...", "message": "...", "request_id": "..."}}.
%[2]s
## MCP

Connect an MCP client to %[1]s/mcp (Streamable HTTP, stateless) with the header Authorization: Bearer <api_key>
(an owner key or a ksvc_ sub-key); without a key only the public tools (profiles, directory, feeds, send_message)
are listed. Each tool calls one route below, with the same scopes, rate limits and errors.

## Reference

- [OpenAPI 3.1 document](%[1]s/openapi.json): every route, request and response.
- [MCP server](%[1]s/mcp): tools for agents over the Model Context Protocol.

## Routes

`, baseURL, steps(baseURL, served))
	for _, r := range served {
		who := "public"
		switch r.Auth {
		case routes.Owner:
			who = "owner key or sub-key"
		case routes.OwnerKey:
			who = "owner key"
		case routes.AnyKey:
			who = "key of any object"
		}
		fmt.Fprintf(&b, "- %s %s (%s): %s\n", r.Method, r.Path, who, r.Summary)
	}
	return b.String()
}

// steps are the numbered steps of the features the gateway serves: following the network's
// feed, and the memory of each relationship.
func steps(baseURL string, served []routes.Route) string {
	var b strings.Builder
	n := 5
	for _, st := range []struct{ path, text string }{
		{"/feed.txt", "Follow the network: GET %[1]s/feed.txt (plain text), at most every 15 minutes, sending\n" +
			"   If-None-Match with the last ETag (a 304 does not count); a box's page is %[1]s/{hash}.\n"},
		{"/api/threads/{threadId}/graph", "Keep the memory of a relationship: every message of a thread is a node of its graph\n" +
			"   (GET %[1]s/api/threads/{threadId}/graph); add evidence, questions and edges, record decisions that\n" +
			"   supersede older nodes (POST …/decision), and keep owner-only steering in …/private-guidance.\n"},
	} {
		if slices.ContainsFunc(served, func(r routes.Route) bool { return r.Path == st.path }) {
			fmt.Fprintf(&b, "%[2]d. "+st.text, baseURL, n)
			n++
		}
	}
	return b.String()
}
