package routes

import "maps"

// Mailbox are mailbox-svc's routes.
var Mailbox = []Route{
	{Method: "POST", Path: "/api/messages", Service: "mailbox-svc", Auth: Public, Ingress: true, Recipient: "to_hash", Backpressure: true,
		Summary: "Send a message to an object; thread_id null opens a new thread", Tag: "messages",
		Headers: []Param{{Name: "Idempotency-Key", Schema: Schema{"type": "string", "minLength": 1, "maxLength": 255},
			Description: "makes a retried send return the first result for 24 hours instead of sending again"}},
		Request: "SendMessage", Status: 201, Response: "Message", Errors: []int{403, 409}},
	{Method: "GET", Path: "/api/objects/{hash}/mailbox", Service: "mailbox-svc", Auth: Owner, Mailbox: true,
		Summary: "List the object's threads, latest activity first", Tag: "mailbox", Response: "Mailbox",
		Query: append([]Param{{Name: "status", Schema: Enum("open", "archived")}}, Paging...)},
	{Method: "GET", Path: "/api/threads/{threadId}", Service: "mailbox-svc", Auth: Owner, Mailbox: true,
		Summary: "Read a thread, oldest message first; marks the caller's inbound messages on the page read", Tag: "mailbox",
		Response: "Thread", Query: Paging},
	{Method: "PATCH", Path: "/api/threads/{threadId}", Service: "mailbox-svc", Auth: Owner, Mailbox: true,
		Summary: "Archive or reopen a thread", Tag: "mailbox", Request: "UpdateThread", Response: "ThreadSummary"},
	{Method: "POST", Path: "/api/objects/{hash}/sender-blocks", Service: "mailbox-svc", Auth: Owner,
		Summary: "Refuse messages from a sender", Tag: "mailbox", Request: "CreateSenderBlock", Status: 201, Response: "SenderBlock"},
	{Method: "DELETE", Path: "/api/objects/{hash}/sender-blocks/{blocked_hash}", Service: "mailbox-svc", Auth: Owner,
		Summary: "Accept messages from a blocked sender again", Tag: "mailbox", Response: "SenderUnblocked"},
}

var (
	messageKind   = Enum("note", "question", "request", "artifact_update", "system")
	threadStatus  = Enum("open", "archived")
	summaryFields = map[string]Schema{
		"id": Str(), "participants": Arr(Str()), "status": threadStatus, "last_message_at": DateTime(),
		"message_count": Int(), "unread_count": Int(),
	}
	summaryRequired = []string{"id", "participants", "status", "last_message_at", "message_count", "unread_count"}
)

// MailboxSchemas are the shapes of mailbox-svc's routes.
var MailboxSchemas = map[string]Schema{
	"SendMessage": Schema{"type": "object", "additionalProperties": false,
		"required": []string{"from_hash", "to_hash", "kind", "body"},
		"properties": map[string]any{
			"from_hash": Str(), "to_hash": Str(), "kind": messageKind,
			"body":      Schema{"type": "string", "minLength": 1, "maxLength": 65536, "description": "at most 65,536 bytes of UTF-8"},
			"thread_id": Nullable(StrMax(64)),
			"signature": Schema{"type": "string", "maxLength": 1024,
				"description": "the sender's detached compact JWS (EdDSA, kid in the protected header) over the canonical payload; see docs/api.md"},
			"signed_at": Schema{"type": "string", "format": "date-time", "description": "when the signature was made; within 5 minutes of the server's time"},
			"nonce":     Schema{"type": "string", "minLength": 16, "maxLength": 128, "description": "the sender's id for this message; a signature with a used nonce is refused"},
		}},
	"Message": Obj(map[string]Schema{
		"id": Str(), "thread_id": Str(), "from_hash": Str(), "to_hash": Str(), "kind": messageKind, "body": Str(),
		"created_at": DateTime(), "sender_verified": Bool(), "kid": Nullable(Str()), "signature": Ref("MessageSignature"),
	}, "id", "thread_id", "from_hash", "to_hash", "kind", "body", "created_at", "sender_verified", "kid", "signature"),
	"ThreadSummary": Obj(summaryFields, summaryRequired...),
	"Mailbox": Obj(map[string]Schema{
		"threads": Arr(Ref("ThreadSummary")), "next_cursor": Nullable(Str()),
	}, "threads", "next_cursor"),
	"ThreadMessage": Obj(map[string]Schema{
		"id": Str(), "from_hash": Str(), "to_hash": Str(), "kind": messageKind, "body": Str(),
		"created_at": DateTime(), "read_at": Nullable(DateTime()),
		"sender_verified": Bool(), "kid": Nullable(Str()), "signature": Ref("MessageSignature"),
	}, "id", "from_hash", "to_hash", "kind", "body", "created_at", "read_at", "sender_verified", "kid", "signature"),
	"Thread": Obj(with(summaryFields, map[string]Schema{
		"thread_id": Str(), "participant_admission": Str(), "messages": Arr(Ref("ThreadMessage")), "next_cursor": Nullable(Str()),
	}), append([]string{"thread_id", "participant_admission", "messages", "next_cursor"}, summaryRequired...)...),
	"UpdateThread": Schema{"type": "object", "additionalProperties": false, "required": []string{"status"},
		"properties": map[string]any{"status": threadStatus}},
	"CreateSenderBlock": Schema{"type": "object", "additionalProperties": false, "required": []string{"blocked_hash"},
		"properties": map[string]any{"blocked_hash": Str()}},
	"SenderBlock":     Obj(map[string]Schema{"ok": Bool(), "blocked_hash": Str()}, "ok", "blocked_hash"),
	"SenderUnblocked": Obj(map[string]Schema{"ok": Bool(), "unblocked": Str()}, "ok", "unblocked"),
}

// with returns a copy of a holding the properties of b as well.
func with(a, b map[string]Schema) map[string]Schema {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}
