package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/pkg/httpx"
)

type ingestRequest struct {
	URLs           []string `json:"urls"`
	CloudDriveURLs []string `json:"cloud_drive_urls"`
	Text           string   `json:"text"`
	Visibility     string   `json:"visibility"`
}

type ingestSelfRequest struct {
	URL         string `json:"url"`
	Text        string `json:"text"`
	Visibility  string `json:"visibility"`
	MessageBody string `json:"message_body"`
}

func (h *Handler) ingest(c *gin.Context) error {
	who, req, err := request[ingestRequest](c)
	if err != nil {
		return err
	}
	v, err := h.Graph.Ingest(c.Request.Context(), httpx.RequestID(c), who,
		graph.IngestDraft{URLs: req.URLs, CloudDriveURLs: req.CloudDriveURLs, Text: req.Text, Visibility: req.Visibility})
	return reply(c, http.StatusCreated, v, err)
}

func (h *Handler) ingestSelf(c *gin.Context) error {
	who, req, err := request[ingestSelfRequest](c)
	if err != nil {
		return err
	}
	d := graph.IngestDraft{Text: req.Text, MessageBody: req.MessageBody, Visibility: req.Visibility}
	if req.URL != "" {
		d.URLs = []string{req.URL}
	}
	v, err := h.Graph.Ingest(c.Request.Context(), httpx.RequestID(c), who, d)
	return reply(c, http.StatusCreated, v, err)
}

func (h *Handler) overview(c *gin.Context) error {
	who, err := caller(c)
	if err != nil {
		return err
	}
	graphs := false
	switch c.Query("include_graph") {
	case "", "0", "false":
	case "1", "true":
		graphs = true
	default:
		return httpx.BadRequest(httpx.CodeInvalidRequest, "include_graph must be 1 or 0")
	}
	scope := graph.SourcesScope(graph.SelfThreadID(who.ObjectID))
	limit, before, err := httpx.PageKey(c, scope)
	if err != nil {
		return err
	}
	v, err := h.Graph.Overview(c.Request.Context(), who, graphs, before, limit, func(key string) string { return httpx.KeyCursor(scope, key) })
	return reply(c, http.StatusOK, v, err)
}

func (h *Handler) sources(c *gin.Context) error {
	who, err := caller(c)
	if err != nil {
		return err
	}
	scope := graph.SourcesScope(c.Param("threadId"))
	limit, before, err := httpx.PageKey(c, scope)
	if err != nil {
		return err
	}
	v, err := h.Graph.Sources(c.Request.Context(), who, c.Param("threadId"), before, limit,
		func(key string) string { return httpx.KeyCursor(scope, key) })
	return reply(c, http.StatusOK, v, err)
}

func (h *Handler) pullSource(c *gin.Context) error {
	who, err := caller(c)
	if err != nil {
		return err
	}
	v, err := h.Graph.PullNow(c.Request.Context(), httpx.RequestID(c), who, c.Param("threadId"), c.Param("sourceId"))
	return reply(c, http.StatusOK, v, err)
}
