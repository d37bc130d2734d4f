package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/context-svc/internal/profile"
	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/httpx"
)

type sourceResponse struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Title     string `json:"title"`
	URL       string `json:"url,omitempty"`
	Text      string `json:"text,omitempty"`
	Included  bool   `json:"included"`
	CreatedAt string `json:"created_at"`
}

type sourceListResponse struct {
	Sources    []sourceResponse `json:"sources"`
	NextCursor *string          `json:"next_cursor"`
}

func sourceView(s *store.Source, included bool) sourceResponse {
	return sourceResponse{ID: s.ID, Kind: s.Kind, Title: s.Title, URL: s.URL, Text: s.Text, Included: included,
		CreatedAt: clock.Format(s.CreatedAt)}
}

func (h *Handler) createSource(c *gin.Context) error {
	t, err := owner(c)
	if err != nil {
		return err
	}
	var req profile.NewSource
	if err := httpx.Decode(c, &req); err != nil {
		return err
	}
	src, included, err := h.Profiles.CreateSource(c.Request.Context(), t, &req)
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, sourceView(src, included))
	return nil
}

func (h *Handler) listSources(c *gin.Context) error {
	t, err := owner(c)
	if err != nil {
		return err
	}
	scope := "sources:" + t.ObjectID
	limit, after, err := httpx.PageKey(c, scope)
	if err != nil {
		return err
	}
	list, included, next, err := h.Profiles.Sources(c.Request.Context(), store.SourcePage{ObjectID: t.ObjectID, After: after, Limit: limit})
	if err != nil {
		return err
	}
	resp := sourceListResponse{Sources: make([]sourceResponse, len(list)), NextCursor: keyCursor(scope, next)}
	for i := range list {
		resp.Sources[i] = sourceView(&list[i], included[list[i].ID])
	}
	c.JSON(http.StatusOK, resp)
	return nil
}

func (h *Handler) deleteSource(c *gin.Context) error {
	t, err := owner(c)
	if err != nil {
		return err
	}
	p, err := h.Profiles.DeleteSource(c.Request.Context(), t, c.Param("sourceId"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, versionResponse{OK: true, Version: p.Version})
	return nil
}
