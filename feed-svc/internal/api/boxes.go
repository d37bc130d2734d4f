package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/feed-svc/internal/feed"
	"github.com/svcdev/svc/feed-svc/internal/page"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
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
	c.Header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	c.Header("X-Content-Type-Options", "nosniff")
	c.Data(status, "text/html; charset=utf-8", body)
	return nil
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
	if p := authn.PrincipalFrom(c); obj.Visibility == "private" && (p == nil || p.ObjectID != obj.ObjectID) {
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
	return &page.Box{Hash: obj.Hash, Title: contract.ProfileTitle(md), Profile: md, Items: items, IsFeed: isFeed}, nil
}
