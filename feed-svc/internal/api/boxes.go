package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/feed-svc/internal/feed"
	"github.com/svcdev/svc/feed-svc/internal/network"
	"github.com/svcdev/svc/feed-svc/internal/page"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/mongox"
)

// Resolver resolves a box's hash (identity-svc).
type Resolver interface {
	Resolve(ctx context.Context, hash string) (*identity.Object, error)
}

// Profiles reads an object's composed profile (context-svc).
type Profiles interface {
	ComposedProfile(ctx context.Context, objectID, hash string) (string, error)
}

// Boxes is what the box page reads from other services.
type Boxes struct {
	Resolver Resolver
	Profiles Profiles
}

// ErrNoBox says that a box page has nothing public to show.
var ErrNoBox = errors.New("no such box")

// boxPage serves GET /{hash}: the box page, or the not-found page for an unknown or private box.
func (h *Handler) boxPage(c *gin.Context) error {
	b, err := h.box(c)
	status := http.StatusOK
	var body []byte
	switch {
	case errors.Is(err, ErrNoBox):
		status = http.StatusNotFound
		body, err = h.Pages.NotFound()
	case err == nil:
		body, err = h.Pages.Render(*b)
	}
	if err != nil {
		return err
	}
	html(c, status, body)
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
	html(c, http.StatusOK, body)
	return nil
}

func entries(rows []network.Row) []page.Entry {
	out := make([]page.Entry, 0, len(rows))
	for _, r := range rows {
		e := page.Entry{Hash: r.Hash, Title: r.Title, Body: r.Body, Tags: r.Tags, At: r.PostedAt}
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

// html answers a page: no script may run and nothing is loaded from elsewhere.
func html(c *gin.Context, status int, body []byte) {
	c.Header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	c.Header("X-Content-Type-Options", "nosniff")
	c.Data(status, "text/html; charset=utf-8", body)
}

func (h *Handler) box(c *gin.Context) (*page.Box, error) {
	ctx := c.Request.Context()
	obj, err := h.Boxes.Resolver.Resolve(ctx, c.Param("box"))
	switch {
	case errors.Is(err, identity.ErrNotFound):
		return nil, ErrNoBox
	case err != nil:
		return nil, httpx.Unavailable(err)
	}
	if !contract.Visible(obj.Visibility, obj.ObjectID, authn.PrincipalFrom(c).Viewer()) {
		return nil, ErrNoBox
	}
	md, err := h.Boxes.Profiles.ComposedProfile(ctx, obj.ObjectID, obj.Hash)
	if err != nil {
		return nil, httpx.Unavailable(err)
	}
	isFeed, err := h.Feeds.Store.IsFeed(ctx, obj.ObjectID)
	if err != nil {
		return nil, err
	}
	var items []feed.Item
	if isFeed {
		if items, err = h.Feeds.Latest(ctx, obj.ObjectID, 10); err != nil {
			return nil, err
		}
	}
	b := &page.Box{Hash: obj.Hash, Title: contract.ProfileTitle(md), Profile: md, Items: items, IsFeed: isFeed,
		Claimed: obj.MailboxStatus == "claimed"}
	if err := h.badges(ctx, obj.ObjectID, b); err != nil {
		return nil, err
	}
	return b, nil
}

// badges fills in what the projections know of the object: when it was created, whether its
// hash was chosen, its verified claims (two point reads). A box whose creation is not projected
// yet shows none of them.
func (h *Handler) badges(ctx context.Context, objectID string, b *page.Box) error {
	o, err := h.Feeds.Store.Object(ctx, objectID)
	switch {
	case errors.Is(err, mongox.ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	b.Since, b.CustomHash = o.CreatedAt, o.HashAt.After(o.CreatedAt)
	claims, err := h.Feeds.Store.VerifiedClaims(ctx, objectID)
	if err != nil {
		return err
	}
	for _, cl := range claims {
		b.Claims = append(b.Claims, page.Claim{ProofType: cl.ProofType, Target: cl.Target, VerifiedAt: cl.VerifiedAt})
	}
	return nil
}
