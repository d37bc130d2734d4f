package api

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/feed-svc/internal/network"
	"github.com/svcdev/svc/feed-svc/internal/page"
	"github.com/svcdev/svc/pkg/authn"
)

// boxPage serves GET /{hash}: the box page, or the not-found page for an unknown or private box.
func (h *Handler) boxPage(c *gin.Context) error {
	b, err := h.Boxes.Box(c.Request.Context(), c.Param("box"), authn.PrincipalFrom(c).Viewer())
	status := http.StatusOK
	var body []byte
	switch {
	case errors.Is(err, page.ErrNoBox):
		status = http.StatusNotFound
		body, err = h.Pages.NotFound()
	case err == nil:
		body, err = h.Pages.Render(*b)
	}
	if err != nil {
		return err
	}
	h.html(c, status, body)
	return nil
}

// homePageSize is how many boxes and feed items the home page shows: a page of each list.
const homePageSize = 12

// homePage serves GET /: what svc is, a page of the newest public boxes and a page of the
// network's feed, both read from feed-svc's own lists.
func (h *Handler) homePage(c *gin.Context) error {
	ctx := c.Request.Context()
	boxes, err := h.Network.Global(ctx, network.Query{Kind: network.KindNewSvc, Limit: homePageSize})
	if err != nil {
		return err
	}
	items, err := h.Network.Global(ctx, network.Query{Kind: network.KindItem, Limit: homePageSize, Bodies: true})
	if err != nil {
		return err
	}
	home := page.Home{BoxesTotal: boxes.Total, Boxes: entries(boxes.Items), Items: entries(items.Items)}
	body, err := h.Pages.RenderHome(home)
	if err != nil {
		return err
	}
	h.html(c, http.StatusOK, body)
	return nil
}

func entries(rows []network.Row) []page.Entry {
	out := make([]page.Entry, 0, len(rows))
	for _, r := range rows {
		e := page.Entry{Hash: r.Hash, BoxTitle: r.BoxTitle, Title: r.Title, Body: r.Body, Tags: r.Tags, At: r.PostedAt}
		switch {
		case r.Who == nil:
		case r.Kind == network.KindNewSvc:
			e.Title = r.Who.Name // the row's title reads "New svc: <name>"; the page lists names
		case r.Who.Svc == nil || *r.Who.Svc != r.Hash:
			e.Author = r.Who.Name // an item by someone else than the box
		}
		out = append(out, e)
	}
	return out
}

// html answers a page: no script may run but the pages' own (admitted by its hash), it may call
// only the API of its own origin, and nothing is loaded from elsewhere.
func (h *Handler) html(c *gin.Context, status int, body []byte) {
	c.Header("Content-Security-Policy", "default-src 'none'; script-src "+h.Pages.ScriptSource()+"; connect-src 'self'; "+
		"style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	c.Header("X-Content-Type-Options", "nosniff")
	c.Data(status, "text/html; charset=utf-8", body)
}
