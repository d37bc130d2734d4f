package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/pkg/httpx"
)

type guidanceRequest struct {
	Body *string `json:"body" required:"true"`
}

func (h *Handler) putGuidance(c *gin.Context) error {
	who, req, err := request[guidanceRequest](c)
	if err != nil {
		return err
	}
	v, err := h.Graph.PutGuidance(c.Request.Context(), who, c.Param("threadId"), *req.Body)
	return reply(c, http.StatusOK, v, err)
}

func (h *Handler) getGuidance(c *gin.Context) error {
	who, err := caller(c)
	if err != nil {
		return err
	}
	scope := graph.GuidanceScope(c.Param("threadId"), who.ObjectID)
	limit, before, err := httpx.PageSeq(c, scope)
	if err != nil {
		return err
	}
	v, err := h.Graph.Guidance(c.Request.Context(), who, c.Param("threadId"), before, limit,
		func(seq int64) string { return httpx.SeqCursor(scope, seq) })
	return reply(c, http.StatusOK, v, err)
}
