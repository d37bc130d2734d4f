package http

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/context-svc/internal/profile"
	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/httpx"
)

// Limits of context links.
const (
	MaxLinkTitle   = 200
	MaxLinkNote    = 2000
	MaxLinkSources = 50
)

type createLinkRequest struct {
	Title     *string  `json:"title"`
	Note      *string  `json:"note"`
	SourceIDs []string `json:"source_ids"`
}

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

// validateLink checks a create request and returns its title, note and source ids.
func validateLink(req *createLinkRequest) (title, note string, ids []string, err error) {
	title, note = strings.TrimSpace(deref(req.Title)), deref(req.Note)
	switch {
	case title == "":
		return "", "", nil, httpx.MissingField("title")
	case len(title) > MaxLinkTitle:
		return "", "", nil, httpx.BadRequest(httpx.CodeInvalidRequest, "title is longer than %d characters", MaxLinkTitle)
	case len(note) > MaxLinkNote:
		return "", "", nil, httpx.BadRequest(httpx.CodeInvalidRequest, "note is longer than %d characters", MaxLinkNote)
	case len(req.SourceIDs) == 0:
		return "", "", nil, httpx.MissingField("source_ids")
	case len(req.SourceIDs) > MaxLinkSources:
		return "", "", nil, httpx.BadRequest(httpx.CodeInvalidRequest, "source_ids has more than %d entries", MaxLinkSources)
	}
	seen := map[string]bool{}
	for _, id := range req.SourceIDs {
		if seen[id] {
			return "", "", nil, httpx.BadRequest(httpx.CodeInvalidRequest, "source %s is listed twice", id)
		}
		seen[id] = true
	}
	return title, note, req.SourceIDs, nil
}

func (h *Handler) createLink(c *gin.Context) {
	_, t, ok := authn.RequireOwner(c)
	if !ok {
		return
	}
	var req createLinkRequest
	if err := httpx.Decode(c, &req); err != nil {
		httpx.Abort(c, err)
		return
	}
	title, note, ids, err := validateLink(&req)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	ctx := c.Request.Context()
	known, err := h.Store.SourcesByID(ctx, t.ObjectID, ids)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	if len(known) != len(ids) {
		httpx.Abort(c, httpx.BadRequest(httpx.CodeInvalidRequest, "source_ids name a source this object does not have"))
		return
	}
	l := &store.Link{ID: apikey.NewID("lnk"), ObjectID: t.ObjectID, Title: title, Note: note, SourceIDs: ids, CreatedAt: clock.Now()}
	if err := h.Store.InsertLink(ctx, l); err != nil {
		httpx.Abort(c, err)
		return
	}
	c.JSON(http.StatusCreated, h.linkView(l))
}

func (h *Handler) listLinks(c *gin.Context) {
	_, t, ok := authn.RequireOwner(c)
	if !ok {
		return
	}
	limit, before, err := httpx.PageParams(c, httpx.IDWithPrefix("lnk"))
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	list, err := h.Store.ListLinks(c.Request.Context(), store.LinkPage{ObjectID: t.ObjectID, Before: before, Limit: limit + 1})
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	resp := linkListResponse{Links: []linkResponse{}}
	list, resp.NextCursor = httpx.Page(list, limit, func(l store.Link) string { return l.ID })
	for i := range list {
		resp.Links = append(resp.Links, h.linkView(&list[i]))
	}
	c.JSON(http.StatusOK, resp)
}

// publicLink loads a link and composes its sources. A link is an explicit share by the owner:
// it composes the sources it names whether or not they are in the public profile.
func (h *Handler) publicLink(c *gin.Context) (*store.Link, string, bool) {
	id := c.Param("linkId")
	if !strings.HasPrefix(id, "lnk_") {
		httpx.Abort(c, httpx.NotFound("context link"))
		return nil, "", false
	}
	ctx := c.Request.Context()
	l, err := h.Store.Link(ctx, id)
	if err != nil {
		httpx.Abort(c, storeError(err, "context link"))
		return nil, "", false
	}
	sources, err := h.composable(ctx, l.ObjectID, l.SourceIDs)
	if err != nil {
		httpx.Abort(c, err)
		return nil, "", false
	}
	return l, profile.ComposeSources(sources), true
}

func (h *Handler) getLink(c *gin.Context) {
	l, composed, ok := h.publicLink(c)
	if !ok {
		return
	}
	c.JSON(http.StatusOK, publicLinkResponse{LinkID: l.ID, Title: l.Title, Note: l.Note, Context: composed})
}

// linkPage is the public address /context/<link_id>: the link as one markdown document.
func (h *Handler) linkPage(c *gin.Context) {
	l, composed, ok := h.publicLink(c)
	if !ok {
		return
	}
	var b strings.Builder
	b.WriteString("# " + strings.Join(strings.Fields(l.Title), " ") + "\n\n")
	if note := strings.TrimSpace(l.Note); note != "" {
		b.WriteString(note + "\n\n")
	}
	b.WriteString(composed)
	c.Data(http.StatusOK, textMarkdown, []byte(b.String()))
}
