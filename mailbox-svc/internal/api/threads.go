package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/mailbox-svc/internal/mailbox"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/httpx"
)

type threadSummary struct {
	ID            string   `json:"id"`
	Participants  []string `json:"participants"`
	Status        string   `json:"status"`
	LastMessageAt string   `json:"last_message_at"`
	MessageCount  int      `json:"message_count"`
	UnreadCount   int      `json:"unread_count"`
}

type threadMessage struct {
	ID        string  `json:"id"`
	FromHash  string  `json:"from_hash"`
	ToHash    string  `json:"to_hash"`
	Kind      string  `json:"kind"`
	Body      string  `json:"body"`
	CreatedAt string  `json:"created_at"`
	ReadAt    *string `json:"read_at"`
	signedFields
}

type threadResponse struct {
	threadSummary
	ThreadID             string          `json:"thread_id"`
	ParticipantAdmission string          `json:"participant_admission"`
	Messages             []threadMessage `json:"messages"`
	NextCursor           *string         `json:"next_cursor"`
}

type updateThreadRequest struct {
	Status *string `json:"status" required:"true"`
}

func (h *Handler) mailbox(c *gin.Context) error {
	p, _, err := authn.Owner(c)
	if err != nil {
		return err
	}
	if _, err := mailboxCaller(c); err != nil {
		return err
	}
	status := c.Query("status")
	limit, before, err := httpx.PageKey(c, mailbox.MailboxScope(p.ObjectID, status))
	if err != nil {
		return err
	}
	threads, next, err := h.Threads.Mailbox(c.Request.Context(), p.ObjectID,
		mailbox.MailboxQuery{Status: status, Limit: limit, Before: before})
	if err != nil {
		return err
	}
	out := make([]threadSummary, len(threads))
	for i, t := range threads {
		out[i] = summary(t)
	}
	c.JSON(http.StatusOK, gin.H{"threads": out, "next_cursor": keyCursor(mailbox.MailboxScope(p.ObjectID, status), next)})
	return nil
}

func (h *Handler) getThread(c *gin.Context) error {
	p, err := mailboxCaller(c)
	if err != nil {
		return err
	}
	scope := mailbox.ThreadScope(c.Param("threadId"))
	limit, after, err := httpx.PageKey(c, scope)
	if err != nil {
		return err
	}
	t, err := h.Threads.Read(c.Request.Context(), p.ObjectID, c.Param("threadId"), after, limit)
	if err != nil {
		return err
	}
	resp := threadResponse{threadSummary: summary(t.Summary), ThreadID: t.ID, ParticipantAdmission: t.Admission,
		Messages: make([]threadMessage, len(t.Messages)), NextCursor: keyCursor(scope, t.Next)}
	for i, m := range t.Messages {
		resp.Messages[i] = threadMessage{ID: m.ID, FromHash: m.FromHash, ToHash: m.ToHash, Kind: m.Kind, Body: m.Body,
			CreatedAt: clock.Format(m.CreatedAt), ReadAt: clock.FormatPtr(m.ReadAt), signedFields: signed(m.Signature)}
	}
	c.JSON(http.StatusOK, resp)
	return nil
}

func (h *Handler) updateThread(c *gin.Context) error {
	p, err := mailboxCaller(c)
	if err != nil {
		return err
	}
	var req updateThreadRequest
	if err := httpx.Decode(c, &req); err != nil {
		return err
	}
	t, err := h.Threads.SetStatus(c.Request.Context(), p.ObjectID, c.Param("threadId"), *req.Status)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, summary(*t))
	return nil
}

func summary(t mailbox.Summary) threadSummary {
	return threadSummary{ID: t.ID, Participants: t.Participants, Status: t.Status,
		LastMessageAt: clock.Format(t.LastMessageAt), MessageCount: t.MessageCount, UnreadCount: t.UnreadCount}
}

// keyCursor is the cursor of the page after key in the list scope, nil when key is "" (the last
// page).
func keyCursor(scope, key string) *string {
	if key == "" {
		return nil
	}
	c := httpx.KeyCursor(scope, key)
	return &c
}
