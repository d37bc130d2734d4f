package routes

// Graph are graph-svc's routes. Every one needs, from a sub-key, the mailbox scope besides read
// or write; only the thread's two participants may call the thread routes (anyone else: 404).
var Graph = []Route{
	{Method: "GET", Path: "/api/threads/{threadId}/graph", Service: "graph-svc", Auth: Owner, Mailbox: true,
		Summary: "Read the thread's graph: every node but the other side's owner_only ones, and the edges between them",
		Tag:     "graph", Response: "Graph",
		Query: []Param{{Name: "as_of", Schema: Schema{"type": "string", "format": "date-time"},
			Description: "the graph as it stood then: nodes and edges created by then, each node with the validity it had then"}}},
	{Method: "POST", Path: "/api/threads/{threadId}/nodes", Service: "graph-svc", Auth: Owner, Mailbox: true,
		Summary: "Add a node to the thread's graph", Tag: "graph", Request: "CreateNode", Status: 201, Response: "GraphNode"},
	{Method: "POST", Path: "/api/threads/{threadId}/edges", Service: "graph-svc", Auth: Owner, Mailbox: true,
		Summary: "Join two nodes of the thread's graph", Tag: "graph", Request: "CreateEdge", Status: 201, Response: "GraphEdge"},
	{Method: "POST", Path: "/api/threads/{threadId}/decision", Service: "graph-svc", Auth: Owner, Mailbox: true,
		Summary: "Record a decision; the nodes it names are superseded (they gain invalid_at and stay readable)",
		Tag:     "graph", Request: "Decision", Status: 201, Response: "GraphNode"},
	{Method: "PUT", Path: "/api/threads/{threadId}/private-guidance", Service: "graph-svc", Auth: Owner, Mailbox: true,
		Summary: "Write the caller's private guidance for the thread (a new version; readable only by the caller's owner)",
		Tag:     "guidance", Request: "PrivateGuidance", Response: "PrivateGuidanceWrite", Errors: []int{409}},
	{Method: "GET", Path: "/api/threads/{threadId}/private-guidance", Service: "graph-svc", Auth: Owner, Mailbox: true,
		Summary: "Read the caller's own private guidance for the thread and its versions", Tag: "guidance",
		Response: "PrivateGuidanceRead"},
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
		}},
	"GraphNode": Obj(map[string]Schema{
		"id": Str(), "thread_id": Str(), "type": nodeType, "title": Nullable(Str()), "body": Str(), "visibility": nodeVisibility,
		"author_hash": Str(), "confidence": Nullable(Schema{"type": "number"}), "supersedes_node_ids": Arr(Str()),
		"message_id": Nullable(Str()), "source_id": Nullable(Str()), "created_at": DateTime(),
		"invalid_at": Nullable(DateTime()), "invalidated_by": Nullable(Str()),
	}, "id", "thread_id", "type", "title", "body", "visibility", "author_hash", "confidence", "supersedes_node_ids",
		"message_id", "source_id", "created_at", "invalid_at", "invalidated_by"),
	"GraphEdge": Obj(map[string]Schema{
		"id": Str(), "thread_id": Str(), "from_node_id": Str(), "to_node_id": Str(), "type": edgeType, "author_hash": Str(),
		"message_id": Nullable(Str()), "source_id": Nullable(Str()), "created_at": DateTime(),
	}, "id", "thread_id", "from_node_id", "to_node_id", "type", "author_hash", "message_id", "source_id", "created_at"),
	"Graph": Obj(map[string]Schema{
		"thread_id": Str(), "as_of": Nullable(DateTime()), "nodes": Arr(Ref("GraphNode")), "edges": Arr(Ref("GraphEdge")),
	}, "thread_id", "as_of", "nodes", "edges"),
	"PrivateGuidance": Schema{"type": "object", "additionalProperties": false, "required": []string{"body"},
		"properties": map[string]any{"body": Schema{"type": "string", "minLength": 1, "maxLength": 65536}}},
	"PrivateGuidanceWrite": Obj(map[string]Schema{"ok": Bool(), "thread_id": Str(), "version": Int(), "updated_at": DateTime()},
		"ok", "thread_id", "version", "updated_at"),
	"PrivateGuidanceRead": Obj(map[string]Schema{
		"thread_id": Str(), "body": Str(), "version": Int(), "updated_at": DateTime(),
		"versions": Arr(Obj(map[string]Schema{"version": Int(), "created_at": DateTime()}, "version", "created_at")),
	}, "thread_id", "body", "version", "updated_at", "versions"),
}
