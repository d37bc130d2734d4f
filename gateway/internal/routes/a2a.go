package routes

// A2A are the routes of each box's A2A v1.0 HTTP+JSON binding, the interface its agent card
// names (docs/api.md, "A2A"). message:send is public ingress exactly as POST /api/messages is,
// limited per client and per recipient (the box), and goes through the same send use case.
var A2A = []Route{
	{Method: "POST", Path: "/api/objects/{hash}/a2a/message:send", Service: "mailbox-svc", Auth: Public, Ingress: true, Recipient: RecipientTarget, Backpressure: true,
		Summary: "A2A SendMessage: deliver an A2A message to the box's mailbox (contextId = thread_id); answers an A2A Message whose taskId is the message id",
		Tag:     "a2a", Request: "A2ASendMessageRequest", Response: "A2ASendMessageResponse", Errors: []int{403, 409}},
	{Method: "GET", Path: "/.well-known/agent-card.json", Service: "context-svc", Auth: Public,
		Summary: "svc's own A2A agent card: an agent that delivers a message to any box (message.metadata.to_hash), signed with svc's key (typ JOSE, jku its key directory)",
		Tag:     "a2a", Response: "AgentCard"},
	{Method: "POST", Path: "/a2a/message:send", Service: "mailbox-svc", Auth: Public, Ingress: true, Recipient: "message.metadata.to_hash", Backpressure: true,
		Summary: "A2A SendMessage to svc's own card (/.well-known/agent-card.json): deliver an A2A message to the box message.metadata.to_hash names, as the box's own binding does",
		Tag:     "a2a", Request: "A2AServiceSendMessageRequest", Response: "A2ASendMessageResponse", Errors: []int{403, 409}},
	{Method: "GET", Path: "/api/objects/{hash}/a2a/tasks/{id}", Service: "mailbox-svc", Auth: AnyKey, Mailbox: true,
		Summary: "A2A GetTask: a message sent to the box, submitted until the box replies in its thread, then completed with the reply",
		Tag:     "a2a", Response: "A2ATask"},
}

// RecipientTarget as a route's Recipient limits ingress per the object the path's {hash} names.
const RecipientTarget = "{hash}"

var (
	a2aPart = Obj(map[string]Schema{
		"text": Str(), "raw": Str(), "data": Schema{}, "url": Str(), "filename": Str(), "mediaType": Str(),
		"metadata": Schema{"type": "object"},
	})
	// a2aSendConfiguration is a SendMessageRequest's configuration, which svc reads none of.
	a2aSendConfiguration = Obj(map[string]Schema{
		"acceptedOutputModes": strs, "returnImmediately": Bool(), "historyLength": Int(),
		"taskPushNotificationConfig": Schema{"type": "object"},
	})
	a2aMessage = func(required ...string) Schema {
		return Obj(map[string]Schema{
			"messageId": Str(), "contextId": Str(), "taskId": Str(), "role": Enum("ROLE_USER", "ROLE_AGENT"),
			"parts": Arr(a2aPart), "metadata": Schema{"type": "object"}, "extensions": strs, "referenceTaskIds": strs,
		}, required...)
	}
)

// A2ASchemas are the A2A v1.0 shapes the binding takes and answers (ProtoJSON of a2a.proto).
var A2ASchemas = map[string]Schema{
	"A2AMessage": a2aMessage("messageId", "role", "parts"),
	"A2ASendMessageRequest": Obj(map[string]Schema{
		"tenant":        Str(),
		"configuration": a2aSendConfiguration,
		"message":       Schema{"allOf": []any{Ref("A2AMessage")}, "description": "role ROLE_USER, text parts only; metadata may carry from_hash, kind, and a signature with signed_at and nonce as POST /api/messages takes them"},
		"metadata":      Schema{"type": "object"},
	}, "message"),
	"A2AServiceSendMessageRequest": Obj(map[string]Schema{
		"tenant":        Str(),
		"configuration": a2aSendConfiguration,
		"message": Obj(map[string]Schema{
			"messageId": Str(), "contextId": Str(), "taskId": Str(), "role": Enum("ROLE_USER", "ROLE_AGENT"),
			"parts": Arr(a2aPart), "extensions": strs, "referenceTaskIds": strs,
			"metadata": Schema{"type": "object", "required": []string{"to_hash"},
				"description": "to_hash names the box to deliver to; from_hash, kind, and a signature with signed_at and nonce as POST /api/messages takes them"},
		}, "messageId", "role", "parts", "metadata"),
		"metadata": Schema{"type": "object"},
	}, "message"),
	"A2ASendMessageResponse": Obj(map[string]Schema{"message": Ref("A2AMessage")}, "message"),
	"A2ATask": Obj(map[string]Schema{
		"id": Str(), "contextId": Str(),
		"status": Obj(map[string]Schema{
			"state": Enum("TASK_STATE_SUBMITTED", "TASK_STATE_COMPLETED"), "message": Ref("A2AMessage"), "timestamp": DateTime(),
		}, "state", "timestamp"),
		"history":  Arr(Ref("A2AMessage")),
		"metadata": Schema{"type": "object"},
	}, "id", "contextId", "status", "history"),
}
