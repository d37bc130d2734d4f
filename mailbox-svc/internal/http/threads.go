package http

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/mailbox-svc/internal/mailbox"
	"github.com/svcdev/svc/mailbox-svc/internal/store"
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
}

type threadResponse struct {
	threadSummary
	ThreadID             string          `json:"thread_id"`
	ParticipantAdmission string          `json:"participant_admission"`
	Messages             []threadMessage `json:"messages"`
	NextCursor           *string         `json:"next_cursor"`
}

type updateThreadRequest struct {
	Status *string `json:"status"`
}

func (h *Handler) mailbox(c *gin.Context) {
	p, _, ok := authn.RequireOwner(c)
	if !ok {
		return
	}
	if _, ok := mailboxCaller(c); !ok {
		return
	}
	q := store.MailboxQuery{ObjectID: p.ObjectID, Status: c.Query("status")}
	if q.Status != "" && !mailbox.ValidStatus(q.Status) {
		httpx.Abort(c, httpx.BadRequest(httpx.CodeInvalidRequest, "status must be open or archived"))
		return
	}
	limit, raw, err := httpx.PageParams(c, func(s string) bool { return parseMailboxPosition(s) != nil })
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	q.After = parseMailboxPosition(raw)
	q.Limit = limit + 1 // one more tells whether there is a next page
	ctx := c.Request.Context()
	threads, err := h.Store.Mailbox(ctx, q)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	threads, next := httpx.Page(threads, limit, mailboxPosition)
	summaries, _, err := h.summaries(ctx, p.ObjectID, threads)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"threads": summaries, "next_cursor": next})
}

// getThread shows a thread to one of its participants, oldest message first, and marks the
// participant's inbound messages read.
func (h *Handler) getThread(c *gin.Context) {
	p, ok := mailboxCaller(c)
	if !ok {
		return
	}
	limit, after, err := httpx.PageParams(c, httpx.IDWithPrefix("msg"))
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	ctx := c.Request.Context()
	t, err := h.participantThread(ctx, c.Param("threadId"), p.ObjectID)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	if err := h.Store.MarkRead(ctx, t.ID, p.ObjectID, clock.Now()); err != nil {
		httpx.Abort(c, err)
		return
	}
	msgs, err := h.Store.Messages(ctx, t.ID, after, limit+1)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	resp := threadResponse{ThreadID: t.ID, ParticipantAdmission: t.Admission, Messages: []threadMessage{}}
	msgs, resp.NextCursor = httpx.Page(msgs, limit, func(m store.Message) string { return m.ID })
	summaries, hashes, err := h.summaries(ctx, p.ObjectID, []store.Thread{*t})
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	resp.threadSummary = summaries[0]
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	readAt, err := h.Store.ReadTimes(ctx, ids)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	for _, m := range msgs {
		var read *string
		if at, ok := readAt[m.ID]; ok {
			read = clock.FormatPtr(&at)
		}
		resp.Messages = append(resp.Messages, threadMessage{
			ID: m.ID, FromHash: hashes[m.FromID], ToHash: hashes[m.ToID], Kind: m.Kind, Body: m.Body,
			CreatedAt: clock.Format(m.CreatedAt), ReadAt: read,
		})
	}
	c.JSON(http.StatusOK, resp)
}

// updateThread opens or archives a thread; either participant may.
func (h *Handler) updateThread(c *gin.Context) {
	p, ok := mailboxCaller(c)
	if !ok {
		return
	}
	var req updateThreadRequest
	if err := httpx.Decode(c, &req); err != nil {
		httpx.Abort(c, err)
		return
	}
	if req.Status == nil {
		httpx.Abort(c, httpx.MissingField("status"))
		return
	}
	if !mailbox.ValidStatus(*req.Status) {
		httpx.Abort(c, httpx.BadRequest(httpx.CodeInvalidRequest, "status must be open or archived"))
		return
	}
	ctx := c.Request.Context()
	t, err := h.participantThread(ctx, c.Param("threadId"), p.ObjectID)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	if t, err = h.Store.SetThreadStatus(ctx, t.ID, *req.Status); err != nil {
		httpx.Abort(c, storeError(err, "thread"))
		return
	}
	summaries, _, err := h.summaries(ctx, p.ObjectID, []store.Thread{*t})
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	c.JSON(http.StatusOK, summaries[0])
}

// participantThread returns a thread objectID takes part in. Any other thread, existing or not,
// is not found: its existence is never revealed.
func (h *Handler) participantThread(ctx context.Context, id, objectID string) (*store.Thread, error) {
	if len(id) > mailbox.MaxThreadID {
		return nil, httpx.NotFound("thread")
	}
	t, err := h.Store.Thread(ctx, id)
	if err != nil {
		return nil, storeError(err, "thread")
	}
	if !t.Has(objectID) {
		return nil, httpx.NotFound("thread")
	}
	return t, nil
}

// summaries renders threads as viewerID sees them, and returns the hashes of their participants.
func (h *Handler) summaries(ctx context.Context, viewerID string, threads []store.Thread) ([]threadSummary, map[string]string, error) {
	ids := make([]string, len(threads))
	var objects []string
	for i, t := range threads {
		ids[i] = t.ID
		objects = append(objects, t.Participants...)
	}
	counts, err := h.Store.Counts(ctx, viewerID, ids)
	if err != nil {
		return nil, nil, err
	}
	hashes, err := h.hashes(ctx, unique(objects))
	if err != nil {
		return nil, nil, err
	}
	out := make([]threadSummary, len(threads))
	for i, t := range threads {
		participants := make([]string, len(t.Participants))
		for j, id := range t.Participants {
			participants[j] = hashes[id]
		}
		n := counts[t.ID]
		out[i] = threadSummary{
			ID: t.ID, Participants: participants, Status: t.Status, LastMessageAt: clock.Format(t.LastMessageAt),
			MessageCount: n.Messages, UnreadCount: n.Unread,
		}
	}
	return out, hashes, nil
}

func unique(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
