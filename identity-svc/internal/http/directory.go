package http

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/httpx"
)

// maxQuery bounds the directory search text.
const maxQuery = 200

type directoryEntry struct {
	Hash          string `json:"hash"`
	MailboxStatus string `json:"mailbox_status"`
	Title         string `json:"title"`
	CreatedAt     string `json:"created_at"`
}

func (h *Handler) directory(c *gin.Context) {
	limit, before, err := httpx.PageParams(c, httpx.IDWithPrefix("obj"))
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	q := store.DirectoryQuery{Limit: limit + 1, Before: before, Match: strings.TrimSpace(c.Query("q"))}
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
	objs, err := h.Store.Directory(c.Request.Context(), q)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	objs, next := httpx.Page(objs, limit, func(o store.Object) string { return o.ID })
	out := make([]directoryEntry, len(objs))
	for i, o := range objs {
		out[i] = directoryEntry{Hash: o.Hash, MailboxStatus: o.MailboxStatus, Title: o.Title, CreatedAt: clock.Format(o.CreatedAt)}
	}
	c.JSON(http.StatusOK, gin.H{"objects": out, "next_cursor": next})
}
