package routes

// Graph are graph-svc's routes. Every one needs, from a sub-key, the mailbox scope besides read
// or write; only the thread's two participants may call the thread routes (anyone else: 404).
var Graph = []Route{
	{Method: "GET", Path: "/api/threads/{threadId}/graph", Service: "graph-svc", Auth: Owner, Mailbox: true,
		Summary: "Read a page of the thread's graph, newest items first (each page's nodes oldest first): every node but the other side's owner_only ones, and the edges between them",
		Tag:     "graph", Response: "Graph",
		Query: append([]Param{{Name: "as_of", Schema: Schema{"type": "string", "format": "date-time"},
			Description: "the graph as it stood then: nodes and edges created by then, each node with the validity it had then"}}, Paging...)},
	{Method: "POST", Path: "/api/threads/{threadId}/nodes", Service: "graph-svc", Auth: Owner, Mailbox: true,
		Summary: "Add a node to the thread's graph (within the node quotas)", Tag: "graph", Request: "CreateNode", Status: 201,
		Response: "GraphNode", Errors: []int{409, 413}},
	{Method: "POST", Path: "/api/threads/{threadId}/edges", Service: "graph-svc", Auth: Owner, Mailbox: true,
		Summary: "Join two nodes of the thread's graph (within the edge quota)", Tag: "graph", Request: "CreateEdge", Status: 201,
		Response: "GraphEdge", Errors: []int{409}},
	{Method: "POST", Path: "/api/threads/{threadId}/decision", Service: "graph-svc", Auth: Owner, Mailbox: true,
		Summary: "Record a decision; the nodes it names are superseded (they gain invalid_at and stay readable)",
		Tag:     "graph", Request: "Decision", Status: 201, Response: "GraphNode", Errors: []int{409, 413}},
	{Method: "PUT", Path: "/api/threads/{threadId}/private-guidance", Service: "graph-svc", Auth: Owner, Mailbox: true,
		Summary: "Write the caller's private guidance for the thread (a new version; readable only by the caller's owner)",
		Tag:     "guidance", Request: "PrivateGuidance", Response: "PrivateGuidanceWrite"},
	{Method: "GET", Path: "/api/threads/{threadId}/private-guidance", Service: "graph-svc", Auth: Owner, Mailbox: true,
		Summary: "Read the caller's own private guidance for the thread and a page of its versions, newest first", Tag: "guidance",
		Response: "PrivateGuidanceRead", Query: Paging},
	{Method: "GET", Path: "/api/threads/{threadId}/sources", Service: "graph-svc", Auth: Owner, Mailbox: true,
		Summary: "List the thread's tracked sources with their status, last pull, linked node and last error, newest first",
		Tag:     "ingest", Response: "ThreadSourceList", Query: Paging},
	{Method: "POST", Path: "/api/threads/{threadId}/sources/{sourceId}/pull", Service: "graph-svc", Auth: Owner, Mailbox: true,
		Summary: "Pull a source the caller added now; a changed text becomes a new node", Tag: "ingest", Response: "ThreadSource",
		Errors: []int{503}},
	{Method: "POST", Path: "/api/ingest", Service: "graph-svc", Auth: Owner, Mailbox: true,
		Summary: "Ingest pages, cloud-drive files and text into the caller's self-ingest thread; each URL becomes a tracked source",
		Tag:     "ingest", Request: "Ingest", Status: 201, Response: "IngestResult", Errors: []int{409, 503}},
	{Method: "POST", Path: "/api/ingest/self", Service: "graph-svc", Auth: Owner, Mailbox: true,
		Summary: "Ingest a page, a text and a note into the caller's self-ingest thread", Tag: "ingest",
		Request: "IngestSelf", Status: 201, Response: "IngestResult", Errors: []int{409, 503}},
	{Method: "GET", Path: "/api/ingest", Service: "graph-svc", Auth: Owner, Mailbox: true,
		Summary: "The caller's hash, context and decision summaries, self-ingest thread and a page of its tracked sources", Tag: "ingest",
		Response: "IngestOverview",
		Query: append([]Param{{Name: "include_graph", Schema: Enum("0", "1", "true", "false"),
			Description: "1 adds previews of the caller's newest thread graphs"}}, Paging...)},
	{Method: "GET", Path: "/api/objects/{hash}/memory/search", Service: "graph-svc", Auth: Owner, Mailbox: true,
		Summary: "Search the object's relationship memory: the nodes of every thread it takes part in, ranked by BM25 over stemmed terms (never the other side's owner_only nodes, never guidance)",
		Tag:     "graph", Response: "MemorySearch", Query: []Param{
			{Name: "q", Schema: Schema{"type": "string", "minLength": 1, "maxLength": 256}, Required: true, Description: "the words to search for (up to 8 distinct stemmed terms)"},
			{Name: "types", Schema: Str(), Description: "comma-separated node types to keep"},
			{Name: "peer", Schema: Str(), Description: "the hash of the other participant whose threads to keep"},
			{Name: "since", Schema: DateTime(), Description: "system time: nodes created at or after"},
			{Name: "until", Schema: DateTime(), Description: "system time: nodes created before"},
			{Name: "as_of", Schema: DateTime(), Description: "system time: memory as it stood then (nodes created by then, superseded only if they were by then)"},
			{Name: "valid_at", Schema: DateTime(), Description: "world time: nodes whose valid_from..valid_until holds then (open ends hold)"},
			{Name: "include_superseded", Schema: Enum("true", "false", "1", "0"), Description: "true keeps superseded nodes (with superseded_by)"},
			{Name: "limit", Schema: Schema{"type": "integer", "minimum": 1, "maximum": 50}, Description: "hits per page (default 10)"},
			{Name: "cursor", Schema: Str(), Description: "next_cursor of the previous page of the same search"},
		}},
}

var (
	nodeType       = Enum("message", "evidence", "context_dump", "question", "answer", "hypothesis", "decision", "correction", "private_goal", "summary")
	edgeType       = Enum("replies_to", "supports", "contradicts", "supersedes", "depends_on", "derived_from", "decides", "reopens")
	nodeVisibility = Enum("participants", "public", "owner_only")
)

// GraphSchemas are the shapes of graph-svc's routes.
var GraphSchemas = map[string]Schema{
	"CreateNode": Schema{"type": "object", "additionalProperties": false, "required": []string{"type", "body"},
		"properties": map[string]any{
			"type": Schema{"type": "string", "description": "a node type other than message (from the mailbox) and decision (POST …/decision)"},
			"body": Schema{"type": "string", "minLength": 1, "maxLength": 65536}, "visibility": Str(),
		}},
	"CreateEdge": Schema{"type": "object", "additionalProperties": false, "required": []string{"from_node_id", "to_node_id", "type"},
		"properties": map[string]any{
			"from_node_id": Str(), "to_node_id": Str(),
			"type": Schema{"type": "string", "description": "an edge type other than supersedes (made by decisions)"},
		}},
	"Decision": Schema{"type": "object", "additionalProperties": false, "required": []string{"title", "body"},
		"properties": map[string]any{
			"title":               Schema{"type": "string", "minLength": 1, "maxLength": 200},
			"body":                Schema{"type": "string", "minLength": 1, "maxLength": 65536},
			"confidence":          Schema{"type": "number", "description": "0 to 1 inclusive (else 400 INVALID_CONFIDENCE)"},
			"supersedes_node_ids": Arr(Str()),
			"valid_from":          Schema{"type": "string", "format": "date-time", "description": "world time: when what it says starts to hold"},
			"valid_until":         Schema{"type": "string", "format": "date-time", "description": "world time: when it stops holding (after valid_from)"},
		}},
	"GraphNode": Obj(map[string]Schema{
		"id": Str(), "thread_id": Str(), "type": nodeType, "title": Nullable(Str()), "body": Str(), "visibility": nodeVisibility,
		"author_hash": Str(), "confidence": Nullable(Schema{"type": "number"}), "supersedes_node_ids": Arr(Str()),
		"valid_from": Nullable(DateTime()), "valid_until": Nullable(DateTime()),
		"message_id": Nullable(Str()), "source_id": Nullable(Str()), "created_at": DateTime(),
		"invalid_at": Nullable(DateTime()), "invalidated_by": Nullable(Str()),
	}, "id", "thread_id", "type", "title", "body", "visibility", "author_hash", "confidence", "supersedes_node_ids",
		"valid_from", "valid_until", "message_id", "source_id", "created_at", "invalid_at", "invalidated_by"),
	"MemorySearch": Obj(map[string]Schema{
		"q": Str(), "terms": Arr(Str()), "next_cursor": Nullable(Str()),
		"hits": Arr(Obj(map[string]Schema{
			"node_id": Str(), "thread_id": Str(), "peer_hash": Nullable(Str()), "author_hash": Str(), "type": nodeType,
			"title": Nullable(Str()), "excerpt": Schema{"type": "string", "maxLength": 280, "description": "the start of the node's body"},
			"created_at": DateTime(), "valid_from": Nullable(DateTime()), "valid_until": Nullable(DateTime()),
			"superseded_at": Nullable(DateTime()), "superseded_by": Nullable(Str()),
			"provenance": Obj(map[string]Schema{"message_id": Nullable(Str()), "source_id": Nullable(Str())}, "message_id", "source_id"),
			"score":      Schema{"type": "number"},
		}, "node_id", "thread_id", "peer_hash", "author_hash", "type", "title", "excerpt", "created_at", "valid_from", "valid_until",
			"superseded_at", "superseded_by", "provenance", "score")),
	}, "q", "terms", "hits", "next_cursor"),
	"GraphEdge": Obj(map[string]Schema{
		"id": Str(), "thread_id": Str(), "from_node_id": Str(), "to_node_id": Str(), "type": edgeType, "author_hash": Str(),
		"message_id": Nullable(Str()), "source_id": Nullable(Str()), "created_at": DateTime(),
	}, "id", "thread_id", "from_node_id", "to_node_id", "type", "author_hash", "message_id", "source_id", "created_at"),
	"Graph": Obj(map[string]Schema{
		"thread_id": Str(), "as_of": Nullable(DateTime()), "nodes": Arr(Ref("GraphNode")), "edges": Arr(Ref("GraphEdge")),
		"next_cursor": Nullable(Str()),
	}, "thread_id", "as_of", "nodes", "edges", "next_cursor"),
	"ThreadSource": Obj(map[string]Schema{
		"id": Str(), "thread_id": Str(), "kind": Enum("url", "cloud_drive"), "url": Str(), "fetch_url": Str(),
		"visibility": nodeVisibility, "status": Enum("pending", "ok", "error"), "last_pulled_at": Nullable(DateTime()),
		"node_id": Nullable(Str()), "last_error": Nullable(Str()), "last_error_at": Nullable(DateTime()), "created_at": DateTime(),
	}, "id", "thread_id", "kind", "url", "fetch_url", "visibility", "status", "last_pulled_at", "node_id", "last_error",
		"last_error_at", "created_at"),
	"ThreadSourceList": Obj(map[string]Schema{"sources": Arr(Ref("ThreadSource")), "next_cursor": Nullable(Str())}, "sources", "next_cursor"),
	"Ingest": Schema{"type": "object", "additionalProperties": false,
		"properties": map[string]any{
			"urls": Arr(Schema{"type": "string", "format": "uri", "maxLength": 2048}), "cloud_drive_urls": Arr(Schema{"type": "string", "format": "uri", "maxLength": 2048}),
			"text": Schema{"type": "string", "maxLength": 262144}, "visibility": Str(),
		}},
	"IngestSelf": Schema{"type": "object", "additionalProperties": false,
		"properties": map[string]any{
			"url": Schema{"type": "string", "format": "uri", "maxLength": 2048}, "text": Schema{"type": "string", "maxLength": 262144},
			"visibility": Str(), "message_body": Schema{"type": "string", "maxLength": 65536},
		}},
	"IngestResult": Obj(map[string]Schema{
		"thread_id": Str(), "nodes": Arr(Ref("GraphNode")), "sources": Arr(Ref("ThreadSource")),
	}, "thread_id", "nodes", "sources"),
	"IngestOverview": Obj(map[string]Schema{
		"hash":    Str(),
		"context": Obj(map[string]Schema{"title": Str(), "bytes": Int(), "excerpt": Str()}, "title", "bytes", "excerpt"),
		"decision_memory": Obj(map[string]Schema{
			"decisions": Int(),
			"latest": Nullable(Obj(map[string]Schema{"node_id": Str(), "thread_id": Str(), "title": Str(), "created_at": DateTime()},
				"node_id", "thread_id", "title", "created_at")),
		}, "decisions", "latest"),
		"self_thread": Nullable(Obj(map[string]Schema{"thread_id": Str(), "created_at": DateTime(), "node_count": Int(), "source_count": Int()},
			"thread_id", "created_at", "node_count", "source_count")),
		"sources":     Arr(Ref("ThreadSource")),
		"next_cursor": Nullable(Str()),
		"graph_previews": Arr(Obj(map[string]Schema{
			"thread_id": Str(), "node_count": Int(), "edge_count": Int(), "latest_nodes": Arr(Ref("GraphNode")),
		}, "thread_id", "node_count", "edge_count", "latest_nodes")),
	}, "hash", "context", "decision_memory", "self_thread", "sources", "next_cursor"),
	"PrivateGuidance": Schema{"type": "object", "additionalProperties": false, "required": []string{"body"},
		"properties": map[string]any{"body": Schema{"type": "string", "minLength": 1, "maxLength": 65536}}},
	"PrivateGuidanceWrite": Obj(map[string]Schema{"ok": Bool(), "thread_id": Str(), "version": Int(), "updated_at": DateTime()},
		"ok", "thread_id", "version", "updated_at"),
	"PrivateGuidanceRead": Obj(map[string]Schema{
		"thread_id": Str(), "body": Str(), "version": Int(), "updated_at": DateTime(),
		"versions":    Arr(Obj(map[string]Schema{"version": Int(), "created_at": DateTime()}, "version", "created_at")),
		"next_cursor": Nullable(Str()),
	}, "thread_id", "body", "version", "updated_at", "versions", "next_cursor"),
}
