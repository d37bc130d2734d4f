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
	limit, after, err := httpx.PageParams(c, httpx.IDWithPrefix("src"))
	if err != nil {
		return err
	}
	list, included, err := h.Profiles.Sources(c.Request.Context(), store.SourcePage{ObjectID: t.ObjectID, After: after, Limit: limit + 1})
	if err != nil {
		return err
	}
	resp := sourceListResponse{Sources: []sourceResponse{}}
	list, resp.NextCursor = httpx.Page(list, limit, func(s store.Source) string { return s.ID })
	for i := range list {
		resp.Sources = append(resp.Sources, sourceView(&list[i], included[list[i].ID]))
	}
	c.JSON(http.StatusOK, resp)
	return nil
}
