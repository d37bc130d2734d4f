package routes

// Context are context-svc's routes: the spec's public context, rules and decision memory.
var Context = []Route{
	{Method: "GET", Path: "/api/objects/{hash}/llm.txt", Service: "context-svc", Auth: Public, Cacheable: true,
		Summary: "Read the composed public profile (markdown); a private object's only with its key", Tag: "context",
		Response: "Text", ContentType: "text/plain; charset=utf-8"},
	{Method: "PUT", Path: "/api/objects/{hash}/llm.txt", Service: "context-svc", Auth: Owner,
		Summary: "Replace the profile markdown; the context version moves by one", Tag: "context",
		Request: "PutLLMTxt", Response: "LLMTxtWritten", Errors: []int{409}},
	{Method: "GET", Path: "/api/objects/{hash}/context", Service: "context-svc", Auth: Owner,
		Summary: "Read the structured context: markdown, rules and sections", Tag: "context", Response: "Context"},
	{Method: "PUT", Path: "/api/objects/{hash}/context", Service: "context-svc", Auth: Owner,
		Summary: "Replace the markdown and rules, and include or leave out sources", Tag: "context",
		Request: "PutContext", Response: "VersionWritten", Errors: []int{409}},
	{Method: "GET", Path: "/api/objects/{hash}/versions", Service: "context-svc", Auth: Owner,
		Summary: "List context versions, newest first, or read one with ?version=N", Tag: "context",
		Response: "Versions", Query: append([]Param{
			{Name: "version", Schema: Schema{"type": "integer", "minimum": 1}, Description: "read this version with its content"},
		}, Paging...)},
	{Method: "GET", Path: "/api/objects/{hash}/rules", Service: "context-svc", Auth: Public, Cacheable: true,
		Summary: "Read the mailbox and response rules", Tag: "rules", Response: "ObjectRules",
		Query: []Param{{Name: "show_blocked_list", Schema: Enum("0", "1", "false", "true"),
			Description: "with the owner's key, add the blocked sender hashes"}}},
	{Method: "PUT", Path: "/api/objects/{hash}/rules", Service: "context-svc", Auth: Owner,
		Summary: "Replace the rules; the context version moves by one", Tag: "rules",
		Request: "PutRules", Response: "VersionWritten", Errors: []int{409}},
	{Method: "GET", Path: "/api/objects/{hash}/sources", Service: "context-svc", Auth: Owner,
		Summary: "List context sources, oldest first", Tag: "sources", Response: "SourceList", Query: Paging},
	{Method: "POST", Path: "/api/objects/{hash}/sources", Service: "context-svc", Auth: Owner,
		Summary: "Add a context source (url, text, code_host, social or cloud_drive)", Tag: "sources",
		Request: "CreateSource", Status: 201, Response: "Source", Errors: []int{409}},
	{Method: "DELETE", Path: "/api/objects/{hash}/sources/{sourceId}", Service: "context-svc", Auth: Owner,
		Summary: "Delete a context source, freeing its place; the profile leaves it out (the context version moves by one)", Tag: "sources",
		Response: "VersionWritten", Errors: []int{404}},
	{Method: "GET", Path: "/api/objects/{hash}/context-links", Service: "context-svc", Auth: Owner,
		Summary: "List context links, newest first", Tag: "sources", Response: "ContextLinkList", Query: Paging},
	{Method: "POST", Path: "/api/objects/{hash}/context-links", Service: "context-svc", Auth: Owner,
		Summary: "Share selected sources at a public address", Tag: "sources",
		Request: "CreateContextLink", Status: 201, Response: "ContextLink"},
	{Method: "GET", Path: "/api/context-links/{linkId}", Service: "context-svc", Auth: Public,
		Summary: "Read a context link with its composed sources", Tag: "sources", Response: "PublicContextLink"},
	{Method: "GET", Path: "/context/{linkId}", Service: "context-svc", Auth: Public,
		Summary: "A context link as one markdown document", Tag: "sources",
		Response: "Text", ContentType: "text/markdown; charset=utf-8"},
	{Method: "PUT", Path: "/api/objects/{hash}/sync", Service: "context-svc", Auth: Owner,
		Summary: "Configure the git repository that llm.txt is pulled from", Tag: "context",
		Request: "ConfigureSync", Response: "SyncConfig"},
	{Method: "POST", Path: "/api/objects/{hash}/sync", Service: "context-svc", Auth: Owner,
		Summary: "Pull llm.txt from the configured repository", Tag: "context",
		Response: "SyncPulled", Errors: []int{409}},
	{Method: "GET", Path: "/api/objects/{hash}/context-coach.txt", Service: "context-svc", Auth: Public, Cacheable: true,
		Summary: "An interview scaffold built from what the profile lacks", Tag: "context",
		Response: "Text", ContentType: "text/plain; charset=utf-8"},
	{Method: "GET", Path: "/api/objects/{hash}/decision-memory", Service: "context-svc", Auth: Owner,
		Summary: "Read decision memory (markdown) and its versions, newest first, or one version (version=N), or the current decisions structured (format=json); ETag is the memory version, which is its own (not the context version)", Tag: "decisions",
		Response: "DecisionMemory", Query: append([]Param{
			{Name: "format", Schema: Enum("markdown", "json"),
				Description: "json: {version, decisions, superseded}, the current decisions with what each superseded, instead of the markdown and its versions"},
			{Name: "version", Schema: Schema{"type": "integer", "minimum": 1}, Description: "read this decision-memory version with its text"},
		}, Paging...)},
	{Method: "PUT", Path: "/api/objects/{hash}/decision-memory", Service: "context-svc", Auth: Owner,
		Summary: "Replace decision memory (its own version moves by one, the context version does not); with If-Match (the ETag of a read) only if it is still that version", Tag: "decisions",
		Headers: []Param{{Name: "If-Match", Schema: Str(), Description: `the memory version read (ETag, e.g. "12"): 412 PRECONDITION_FAILED when decision memory has moved on`}},
		Request: "PutDecisionMemory", Response: "VersionWritten", Errors: []int{409, 412}},
	{Method: "POST", Path: "/api/objects/{hash}/decision-memory", Service: "context-svc", Auth: Owner,
		Summary: "Rebuild decision memory from the current major thread decisions (its own version moves by one)", Tag: "decisions",
		Response: "DecisionMemoryRebuilt", Errors: []int{409}},
	{Method: "GET", Path: "/api/objects/{hash}/agent-card.json", Service: "context-svc", Auth: Public, Cacheable: true,
		Summary: "The object's A2A v1.0 agent card, derived from the profile and signed with the object's key (A2A §8.4)", Tag: "context", Response: "AgentCard"},
}

var (
	sourceKinds = Enum("url", "text", "code_host", "social", "cloud_drive")
	strs        = Arr(Str())
	// memoryChange is what wrote a decision-memory version; carried is the memory an object
	// wrote while decision memory still shared the context's versions.
	memoryChange = Enum("put", "rebuild", "carried")
)

// rulesWithBlocked is the rules object plus the owner's blocked list.
func rulesWithBlocked() Schema {
	props := map[string]Schema{"blocked_hashes": strs}
	for k, v := range CommonSchemas["RulesObject"]["properties"].(map[string]any) {
		props[k] = v.(Schema)
	}
	return Obj(props)
}

// ContextSchemas are the shapes of context-svc's routes.
var ContextSchemas = map[string]Schema{
	"PutLLMTxt": Schema{"type": "object", "additionalProperties": false, "required": []string{"body"},
		"properties": map[string]any{"body": StrMax(256 << 10)}},
	"LLMTxtWritten": Obj(map[string]Schema{"ok": Bool(), "version": Int(), "updated_at": DateTime()},
		"ok", "version", "updated_at"),
	"VersionWritten": Obj(map[string]Schema{"ok": Bool(), "version": Int()}, "ok", "version"),
	"Context": Obj(map[string]Schema{
		"hash": Str(), "version": Int(), "llm_txt": Str(), "rules": Ref("Rules"),
		"sections": Arr(Obj(map[string]Schema{
			"id": Str(), "kind": Str(), "title": Str(), "included": Bool(),
		}, "id", "kind", "title", "included")),
	}, "hash", "version", "llm_txt", "rules", "sections"),
	"PutContext": Schema{"type": "object", "additionalProperties": false, "required": []string{"llm_txt"},
		"properties": map[string]any{
			"llm_txt": StrMax(256 << 10), "rules": Ref("Rules"),
			"sections": Schema{"type": "array", "maxItems": 101, "items": Schema{
				"type": "object", "additionalProperties": false, "required": []string{"id", "included"},
				"properties": map[string]any{"id": Str(), "included": Bool()},
			}},
		}},
	"Versions": Schema{"anyOf": []any{Ref("VersionList"), Ref("Version")}},
	"VersionList": Obj(map[string]Schema{
		"versions": Arr(Obj(map[string]Schema{
			"version": Int(), "change": Str(), "created_at": DateTime(),
		}, "version", "change", "created_at")),
		"next_cursor": Nullable(Str()),
	}, "versions", "next_cursor"),
	"Version": Obj(map[string]Schema{
		"version": Int(), "change": Str(), "created_at": DateTime(), "title": Str(), "llm_txt": Str(),
		"source_ids": strs,
	}, "version", "change", "created_at", "title", "llm_txt", "source_ids"),
	"ObjectRules": rulesWithBlocked(),
	"PutRules": Schema{"type": "object", "additionalProperties": false, "properties": map[string]any{
		"body":  Schema{"type": "string", "maxLength": 16 << 10, "description": "the rules object as JSON text"},
		"rules": Ref("Rules"),
	}},
	"CreateSource": Schema{"type": "object", "additionalProperties": false, "required": []string{"kind"},
		"properties": map[string]any{
			"kind": sourceKinds, "title": StrMax(200), "url": StrMax(2048), "text": StrMax(256 << 10),
			"included": Bool(),
		}},
	"Source": Obj(map[string]Schema{
		"id": Str(), "kind": sourceKinds, "title": Str(), "url": Str(), "text": Str(), "included": Bool(),
		"created_at": DateTime(),
	}, "id", "kind", "title", "included", "created_at"),
	"SourceList": Obj(map[string]Schema{"sources": Arr(Ref("Source")), "next_cursor": Nullable(Str())},
		"sources", "next_cursor"),
	"CreateContextLink": Schema{"type": "object", "additionalProperties": false, "required": []string{"title", "source_ids"},
		"properties": map[string]any{
			"title": StrMax(200), "note": StrMax(2000),
			"source_ids": Schema{"type": "array", "minItems": 1, "maxItems": 50, "items": Str()},
		}},
	"ContextLink": Obj(map[string]Schema{
		"link_id": Str(), "url": Str(), "title": Str(), "note": Str(), "source_ids": strs, "created_at": DateTime(),
	}, "link_id", "url", "title", "note", "source_ids", "created_at"),
	"ContextLinkList": Obj(map[string]Schema{"links": Arr(Ref("ContextLink")), "next_cursor": Nullable(Str())},
		"links", "next_cursor"),
	"PublicContextLink": Obj(map[string]Schema{
		"link_id": Str(), "title": Str(), "note": Str(), "context": Str(),
	}, "link_id", "title", "note", "context"),
	"ConfigureSync": Schema{"type": "object", "additionalProperties": false, "required": []string{"repo_url"},
		"properties": map[string]any{
			"repo_url": StrMax(2000), "branch": StrMax(200), "file_path": StrMax(500),
		}},
	"SyncConfig": Obj(map[string]Schema{
		"ok": Bool(), "repo_url": Str(), "branch": Str(), "file_path": Str(),
	}, "ok", "repo_url", "branch", "file_path"),
	"SyncPulled":     Obj(map[string]Schema{"ok": Bool(), "version": Int(), "commit": Str()}, "ok", "version", "commit"),
	"DecisionMemory": Schema{"anyOf": []any{Ref("DecisionMemoryText"), Ref("DecisionMemoryVersion"), Ref("DecisionMemoryDecisions")}},
	"DecisionMemoryText": Obj(map[string]Schema{
		"memory": Str(), "version": Int(),
		"versions": Arr(Obj(map[string]Schema{"version": Int(), "change": memoryChange, "created_at": DateTime()},
			"version", "change", "created_at")),
		"next_cursor": Nullable(Str()),
	}, "memory", "version", "versions", "next_cursor"),
	"DecisionMemoryVersion": Obj(map[string]Schema{
		"version": Int(), "change": memoryChange, "created_at": DateTime(), "memory": Str(),
	}, "version", "change", "created_at", "memory"),
	"DecisionMemoryDecisions": Obj(map[string]Schema{
		"version": Int(),
		"decisions": Arr(Obj(map[string]Schema{
			"id": Str(), "thread_id": Str(), "title": Str(), "body": Str(), "confidence": Nullable(Schema{"type": "number"}),
			"created_at": DateTime(), "valid_from": Nullable(DateTime()), "valid_until": Nullable(DateTime()),
			"supersedes": Arr(Obj(map[string]Schema{"id": Str(), "title": Nullable(Str())}, "id", "title")),
		}, "id", "thread_id", "title", "body", "confidence", "created_at", "valid_from", "valid_until", "supersedes")),
		"superseded": Arr(Obj(map[string]Schema{
			"id": Str(), "thread_id": Str(), "title": Str(), "created_at": DateTime(), "superseded_by": Str(), "superseded_at": DateTime(),
		}, "id", "thread_id", "title", "created_at", "superseded_by", "superseded_at")),
	}, "version", "decisions", "superseded"),
	"PutDecisionMemory": Schema{"type": "object", "additionalProperties": false, "required": []string{"body"},
		"properties": map[string]any{"body": StrMax(256 << 10)}},
	"DecisionMemoryRebuilt": Obj(map[string]Schema{
		"ok": Bool(), "version": Int(), "rebuilt_from_decisions": Int(),
	}, "ok", "version", "rebuilt_from_decisions"),
	"AgentCard": Obj(map[string]Schema{
		"name": Str(), "description": Str(), "version": Str(), "documentationUrl": Str(),
		"supportedInterfaces": Arr(Obj(map[string]Schema{
			"url": Str(), "protocolBinding": Enum("HTTP+JSON"), "protocolVersion": Enum("1.0"),
		}, "url", "protocolBinding", "protocolVersion")),
		"capabilities": Obj(map[string]Schema{"streaming": Bool(), "pushNotifications": Bool()}),
		"securitySchemes": Schema{"type": "object", "additionalProperties": Obj(map[string]Schema{
			"httpAuthSecurityScheme": Obj(map[string]Schema{"scheme": Str(), "description": Str()}, "scheme"),
		})},
		"defaultInputModes":  strs,
		"defaultOutputModes": strs,
		"skills": Arr(Obj(map[string]Schema{
			"id": Str(), "name": Str(), "description": Str(), "tags": strs, "examples": strs,
		}, "id", "name", "description", "tags")),
		"signatures": Arr(Obj(map[string]Schema{"protected": Str(), "signature": Str()}, "protected", "signature")),
	}, "name", "description", "supportedInterfaces", "version", "capabilities", "securitySchemes", "defaultInputModes",
		"defaultOutputModes", "skills"),
}
