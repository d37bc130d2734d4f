package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/context-svc/internal/profile"
	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/httpx"
)

type linkResponse struct {
	LinkID    string   `json:"link_id"`
	URL       string   `json:"url"`
	Title     string   `json:"title"`
	Note      string   `json:"note"`
	SourceIDs []string `json:"source_ids"`
	CreatedAt string   `json:"created_at"`
}

type linkListResponse struct {
	Links      []linkResponse `json:"links"`
	NextCursor *string        `json:"next_cursor"`
}

type publicLinkResponse struct {
	LinkID  string `json:"link_id"`
	Title   string `json:"title"`
	Note    string `json:"note"`
	Context string `json:"context"`
}

func (h *Handler) linkView(l *store.Link) linkResponse {
	return linkResponse{LinkID: l.ID, URL: h.BaseURL + "/context/" + l.ID, Title: l.Title, Note: l.Note,
		SourceIDs: l.SourceIDs, CreatedAt: clock.Format(l.CreatedAt)}
}

func (h *Handler) createLink(c *gin.Context) error {
	l, err := ownerWrite(c, decodeJSON[profile.NewLink], h.Profiles.CreateLink)
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, h.linkView(l))
	return nil
}

func (h *Handler) listLinks(c *gin.Context) error {
	t, err := owner(c)
	if err != nil {
		return err
	}
	scope := "context-links:" + t.ObjectID
	limit, before, err := httpx.PageKey(c, scope)
	if err != nil {
		return err
	}
	list, next, err := h.Profiles.Links(c.Request.Context(), store.LinkPage{ObjectID: t.ObjectID, Before: before, Limit: limit})
	if err != nil {
		return err
	}
	resp := linkListResponse{Links: make([]linkResponse, len(list)), NextCursor: keyCursor(scope, next)}
	for i := range list {
		resp.Links[i] = h.linkView(&list[i])
	}
	c.JSON(http.StatusOK, resp)
	return nil
}

func (h *Handler) getLink(c *gin.Context) error {
	l, composed, err := h.Profiles.PublicLink(c.Request.Context(), c.Param("linkId"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, publicLinkResponse{LinkID: l.ID, Title: l.Title, Note: l.Note, Context: composed})
	return nil
}

// linkPage is the public address /context/<link_id>: the link as one markdown document.
func (h *Handler) linkPage(c *gin.Context) error {
	l, composed, err := h.Profiles.PublicLink(c.Request.Context(), c.Param("linkId"))
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("# " + strings.Join(strings.Fields(l.Title), " ") + "\n\n")
	if note := strings.TrimSpace(l.Note); note != "" {
		b.WriteString(note + "\n\n")
	}
	b.WriteString(composed)
	c.Data(http.StatusOK, textMarkdown, []byte(b.String()))
	return nil
}
