package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/mailbox-svc/internal/mailbox"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/httpx"
)

// The A2A v1.0 HTTP+JSON binding of a box (docs/api.md, "A2A"): message:send is a send to the
// box through the same Sender as POST /api/messages, and a task is a sent message, completed by
// the box's first reply in its thread.

// A2A roles and task states (A2A v1.0, ProtoJSON enum names).
const (
	a2aRoleUser      = "ROLE_USER"
	a2aRoleAgent     = "ROLE_AGENT"
	a2aStateSubmited = "TASK_STATE_SUBMITTED"
	a2aStateDone     = "TASK_STATE_COMPLETED"
)

type a2aPart struct {
	Text      *string         `json:"text,omitempty"`
	Raw       *string         `json:"raw,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	URL       *string         `json:"url,omitempty"`
	Filename  string          `json:"filename,omitempty"`
	MediaType string          `json:"mediaType,omitempty"`
	Metadata  map[string]any  `json:"metadata,omitempty"`
}

type a2aMessage struct {
	MessageID      *string        `json:"messageId" required:"true"`
	ContextID      string         `json:"contextId,omitempty"`
	TaskID         string         `json:"taskId,omitempty"`
	Role           *string        `json:"role" required:"true"`
	Parts          []a2aPart      `json:"parts" required:"true"`
	Metadata       map[string]any `json:"metadata,omitempty"`
	Extensions     []string       `json:"extensions,omitempty"`
	ReferenceTasks []string       `json:"referenceTaskIds,omitempty"`
}

type a2aSendConfig struct {
	AcceptedOutputModes []string        `json:"acceptedOutputModes,omitempty"`
	ReturnImmediately   bool            `json:"returnImmediately,omitempty"`
	HistoryLength       *int            `json:"historyLength,omitempty"`
	PushConfig          json.RawMessage `json:"taskPushNotificationConfig,omitempty"`
}

type a2aSendRequest struct {
	Tenant   string         `json:"tenant,omitempty"`
	Config   *a2aSendConfig `json:"configuration,omitempty"`
	Message  *a2aMessage    `json:"message" required:"true"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

type a2aTaskStatus struct {
	State     string      `json:"state"`
	Message   *a2aMessage `json:"message,omitempty"`
	Timestamp string      `json:"timestamp"`
}

type a2aTask struct {
	ID        string         `json:"id"`
	ContextID string         `json:"contextId"`
	Status    a2aTaskStatus  `json:"status"`
	History   []*a2aMessage  `json:"history"`
	Metadata  map[string]any `json:"metadata,omitempty"`
}

// a2aSend is message:send: the A2A message becomes a send to the box, from metadata.from_hash or
// else the caller's own object, in the thread contextId names (a new one without it).
func (h *Handler) a2aSend(c *gin.Context) error {
	var req a2aSendRequest
	if err := httpx.Decode(c, &req); err != nil {
		return err
	}
	// The box as the caller named it: a private box's current hash is never revealed.
	return h.a2aDeliver(c, req, c.Param("hash"))
}

// a2aSendAny is the service's own message:send (its card at /.well-known/agent-card.json): the
// same send, to the box message.metadata.to_hash names.
func (h *Handler) a2aSendAny(c *gin.Context) error {
	var req a2aSendRequest
	if err := httpx.Decode(c, &req); err != nil {
		return err
	}
	to, ok := req.Message.Metadata["to_hash"].(string)
	if !ok || strings.TrimSpace(to) == "" {
		return httpx.BadRequest(httpx.CodeMissingField, "name the box to deliver to in message.metadata.to_hash")
	}
	return h.a2aDeliver(c, req, strings.TrimSpace(to))
}

// a2aDeliver sends req's message to the box toHash and answers the A2A acknowledgement.
func (h *Handler) a2aDeliver(c *gin.Context, req a2aSendRequest, toHash string) error {
	d, err := a2aDraft(c, req.Message, toHash)
	if err != nil {
		return err
	}
	// The A2A messageId is the sender's id of the message: a retry with the same id is answered
	// with the first send, as an Idempotency-Key is.
	key := ""
	if mailbox.ValidIdempotencyKey(*req.Message.MessageID) {
		key = "a2a:" + *req.Message.MessageID
	}
	s, err := h.Sender.Send(c.Request.Context(), httpx.RequestID(c), d, key)
	if err != nil {
		return err
	}
	m := s.Message
	ack := fmt.Sprintf("Delivered to %s's mailbox as message %s in thread %s. The box's owner answers in that thread; "+
		"GET tasks/%s shows the reply once there is one.", s.ToHash, m.ID, m.ThreadID, m.ID)
	c.JSON(http.StatusOK, gin.H{"message": &a2aMessage{
		MessageID: ptr(m.ID + ".ack"), ContextID: m.ThreadID, TaskID: m.ID, Role: ptr(a2aRoleAgent),
		Parts: []a2aPart{{Text: &ack}},
		Metadata: map[string]any{"message_id": m.ID, "thread_id": m.ThreadID, "from_hash": s.FromHash, "to_hash": s.ToHash,
			"sender_verified": m.Signature != nil},
	}})
	return nil
}

// a2aDraft reads an A2A message into a send to the box toHash.
func a2aDraft(c *gin.Context, m *a2aMessage, toHash string) (mailbox.Draft, error) {
	if *m.Role != a2aRoleUser {
		return mailbox.Draft{}, httpx.BadRequest(httpx.CodeInvalidRequest, "message.role must be %s", a2aRoleUser)
	}
	texts := make([]string, 0, len(m.Parts))
	for _, p := range m.Parts {
		if p.Text == nil || p.Raw != nil || p.Data != nil || p.URL != nil {
			return mailbox.Draft{}, httpx.BadRequest(httpx.CodeInvalidRequest, "only text parts can be delivered to a mailbox")
		}
		texts = append(texts, *p.Text)
	}
	meta := func(name string) (*string, error) {
		v, ok := m.Metadata[name]
		if !ok {
			return nil, nil
		}
		s, ok := v.(string)
		if !ok {
			return nil, httpx.BadRequest(httpx.CodeInvalidRequest, "message.metadata.%s must be a string", name)
		}
		return &s, nil
	}
	req := sendRequest{ToHash: &toHash, Body: ptr(strings.Join(texts, "\n\n")), Kind: ptr("note")}
	for name, dst := range map[string]**string{"from_hash": &req.FromHash, "kind": &req.Kind, "signature": &req.Signature,
		"signed_at": &req.SignedAt, "nonce": &req.Nonce} {
		v, err := meta(name)
		if err != nil {
			return mailbox.Draft{}, err
		}
		if v != nil {
			*dst = v
		}
	}
	if req.FromHash == nil {
		p := authn.PrincipalFrom(c)
		if p == nil || p.Hash == "" {
			return mailbox.Draft{}, httpx.BadRequest(httpx.CodeMissingField,
				"name the sender in message.metadata.from_hash, or send with the sender's API key")
		}
		req.FromHash = &p.Hash
	}
	if m.ContextID != "" {
		req.ThreadID = &m.ContextID
	}
	return req.draft(c)
}

// a2aTask is GET tasks/{id}: a message sent to the box, read by one of its thread's two
// participants.
func (h *Handler) a2aTask(c *gin.Context) error {
	p, err := mailboxCaller(c)
	if err != nil {
		return err
	}
	t := authn.TargetFrom(c)
	if t == nil {
		return httpx.NotFound("object")
	}
	task, err := h.Tasks.Task(c.Request.Context(), p.ObjectID, t, c.Param("id"))
	if err != nil {
		return err
	}
	out := a2aTask{ID: task.Sent.ID, ContextID: task.Thread,
		Status:  a2aTaskStatus{State: a2aStateSubmited, Timestamp: clock.Format(task.Sent.CreatedAt)},
		History: []*a2aMessage{a2aView(task.Sent, task.Thread, task.Sent.ID, a2aRoleUser)}}
	if task.Reply != nil {
		reply := a2aView(*task.Reply, task.Thread, task.Sent.ID, a2aRoleAgent)
		out.Status = a2aTaskStatus{State: a2aStateDone, Message: reply, Timestamp: clock.Format(task.Reply.CreatedAt)}
		out.History = append(out.History, reply)
	}
	c.JSON(http.StatusOK, out)
	return nil
}

// a2aView is a stored message as an A2A message of the task it belongs to.
func a2aView(m mailbox.MessageView, threadID, taskID, role string) *a2aMessage {
	body := m.Body
	meta := map[string]any{"from_hash": m.FromHash, "to_hash": m.ToHash, "kind": m.Kind, "created_at": clock.Format(m.CreatedAt),
		"sender_verified": m.Signature != nil}
	if m.Signature != nil {
		meta["kid"] = m.Signature.KID
	}
	return &a2aMessage{MessageID: ptr(m.ID), ContextID: threadID, TaskID: taskID, Role: ptr(role), Parts: []a2aPart{{Text: &body}}, Metadata: meta}
}

func ptr[T any](v T) *T { return &v }
