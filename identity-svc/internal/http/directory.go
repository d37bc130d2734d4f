package http

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/httpx"
)

// Paging bounds of every list (DESIGN §4).
const (
	DefaultLimit = 50
	MaxLimit     = 200
	maxQuery     = 200
)

type directoryEntry struct {
	Hash          string `json:"hash"`
	MailboxStatus string `json:"mailbox_status"`
	Title         string `json:"title"`
	CreatedAt     string `json:"created_at"`
}

func (h *Handler) directory(c *gin.Context) {
	q := store.DirectoryQuery{Limit: DefaultLimit, Match: strings.TrimSpace(c.Query("q"))}
	if raw := c.Query("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > MaxLimit {
			httpx.Abort(c, httpx.BadRequest(httpx.CodeInvalidRequest, "limit must be an integer from 1 to %d", MaxLimit))
			return
		}
		q.Limit = n
	}
	if len(q.Match) > maxQuery {
		httpx.Abort(c, httpx.BadRequest(httpx.CodeInvalidRequest, "q is longer than %d characters", maxQuery))
		return
	}
	switch c.Query("status") {
	case "":
	case "verified":
		q.Status = StatusClaimed
	case "unclaimed":
		q.Status = StatusUnclaimed
	default:
		httpx.Abort(c, httpx.BadRequest(httpx.CodeInvalidRequest, "status must be verified or unclaimed"))
		return
	}
	if cur := c.Query("cursor"); cur != "" {
		raw, err := base64.RawURLEncoding.DecodeString(cur)
		if err != nil || !strings.HasPrefix(string(raw), "obj_") {
			httpx.Abort(c, httpx.BadRequest(httpx.CodeInvalidRequest, "cursor is not valid"))
			return
		}
		q.Before = string(raw)
	}
	want := q.Limit
	q.Limit++ // one more tells whether there is a next page
	objs, err := h.Store.Directory(c.Request.Context(), q)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	var next *string
	if len(objs) > want {
		objs = objs[:want]
		cur := base64.RawURLEncoding.EncodeToString([]byte(objs[want-1].ID))
		next = &cur
	}
	out := make([]directoryEntry, len(objs))
	for i, o := range objs {
		out[i] = directoryEntry{Hash: o.Hash, MailboxStatus: o.MailboxStatus, Title: o.Title, CreatedAt: clock.Format(o.CreatedAt)}
	}
	c.JSON(http.StatusOK, gin.H{"objects": out, "next_cursor": next})
}
