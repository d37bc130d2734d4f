package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/pkg/httpx"
)

type nodeRequest struct {
	Type       *string `json:"type" required:"true"`
	Body       *string `json:"body" required:"true"`
	Visibility string  `json:"visibility"`
}

type edgeRequest struct {
	From *string `json:"from_node_id" required:"true"`
	To   *string `json:"to_node_id" required:"true"`
	Type *string `json:"type" required:"true"`
}

type decisionRequest struct {
	Title      *string  `json:"title" required:"true"`
	Body       *string  `json:"body" required:"true"`
	Confidence *float64 `json:"confidence"`
	Supersedes []string `json:"supersedes_node_ids"`
	ValidFrom  string   `json:"valid_from"`
	ValidUntil string   `json:"valid_until"`
}

func (h *Handler) graph(c *gin.Context) error {
	who, err := caller(c)
	if err != nil {
		return err
	}
	asOf, err := graph.ParseTime("as_of", c.Query("as_of")) // empty: now
	if err != nil {
		return err
	}
	scope := graph.GraphScope(c.Param("threadId"))
	limit, before, err := httpx.PageKey(c, scope)
	if err != nil {
		return err
	}
	v, err := h.Graph.Graph(c.Request.Context(), who, c.Param("threadId"), graph.GraphPage{
		Before: before, Limit: limit, AsOf: asOf, Cursor: func(key string) string { return httpx.KeyCursor(scope, key) }})
	return reply(c, http.StatusOK, v, err)
}

func (h *Handler) addNode(c *gin.Context) error {
	who, req, err := request[nodeRequest](c)
	if err != nil {
		return err
	}
	v, err := h.Graph.AddNode(c.Request.Context(), who, c.Param("threadId"),
		graph.NodeDraft{Type: *req.Type, Body: *req.Body, Visibility: req.Visibility})
	return reply(c, http.StatusCreated, v, err)
}

func (h *Handler) addEdge(c *gin.Context) error {
	who, req, err := request[edgeRequest](c)
	if err != nil {
		return err
	}
	v, err := h.Graph.AddEdge(c.Request.Context(), who, c.Param("threadId"),
		graph.EdgeDraft{From: *req.From, To: *req.To, Type: *req.Type})
	return reply(c, http.StatusCreated, v, err)
}

func (h *Handler) decide(c *gin.Context) error {
	who, req, err := request[decisionRequest](c)
	if err != nil {
		return err
	}
	from, err := graph.ParseTime("valid_from", req.ValidFrom)
	if err != nil {
		return err
	}
	until, err := graph.ParseTime("valid_until", req.ValidUntil)
	if err != nil {
		return err
	}
	v, err := h.Graph.Decide(c.Request.Context(), httpx.RequestID(c), who, c.Param("threadId"), graph.DecisionDraft{
		Title: *req.Title, Body: *req.Body, Confidence: req.Confidence, Supersedes: req.Supersedes,
		ValidFrom: from, ValidUntil: until})
	return reply(c, http.StatusCreated, v, err)
}
