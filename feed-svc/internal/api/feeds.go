package api

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/feed-svc/internal/feed"
	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/httpx"
)

type enableFeedRequest struct{}

type feedResponse struct {
	OK        bool   `json:"ok"`
	Hash      string `json:"hash"`
	CreatedAt string `json:"created_at"`
}

func (h *Handler) enableFeed(c *gin.Context) error {
	t, err := owner(c)
	if err != nil {
		return err
	}
	if err := httpx.Decode(c, &enableFeedRequest{}); err != nil {
		return err
	}
	f, err := h.Feeds.Enable(c.Request.Context(), t)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, feedResponse{OK: true, Hash: t.Hash, CreatedAt: clock.Format(f.CreatedAt)})
	return nil
}

type publishRequest struct {
	Title *string  `json:"title" required:"true"`
	Body  *string  `json:"body" required:"true"`
	Tags  []string `json:"tags"`
}

func (h *Handler) publish(c *gin.Context) error {
	p := authn.PrincipalFrom(c)
	if p == nil {
		return httpx.Unauthorized("an API key is required to publish")
	}
	t, err := target(c)
	if err != nil {
		return err
	}
	var req publishRequest
	if err := httpx.Decode(c, &req); err != nil {
		return err
	}
	it, err := h.Feeds.Publish(c.Request.Context(), t, p,
		feed.Draft{Title: *req.Title, Body: *req.Body, Tags: req.Tags}, httpx.RequestID(c))
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, it)
	return nil
}

// itemsPage is a page of a box's feed as the API shows it.
type itemsPage struct {
	Items      []feed.Item `json:"items"`
	NextCursor *string     `json:"next_cursor"`
}

func (h *Handler) items(c *gin.Context) error {
	t, err := target(c)
	if err != nil {
		return err
	}
	scope := store.ItemsScope(t.ObjectID)
	limit, before, err := httpx.PageKey(c, scope)
	if err != nil {
		return err
	}
	p := authn.PrincipalFrom(c)
	if !contract.Visible(t.Visibility, t.ObjectID, p.Viewer()) {
		return httpx.NotFound("object") // before the validator: a private box's is its owner's only
	}
	return h.polled(c, httpx.BoxFeed(t.ObjectID), "application/json; charset=utf-8", t.Visibility == contract.Private, func() ([]byte, error) {
		page, err := h.Feeds.Items(c.Request.Context(), t, p, before, limit)
		if err != nil {
			return nil, err
		}
		return json.Marshal(itemsPage{Items: page.Items, NextCursor: cursor(scope, page.Next)})
	})
}

// cursor is the cursor of a list's next page (its key), or nil when none is left.
func cursor(scope, next string) *string {
	if next == "" {
		return nil
	}
	s := httpx.KeyCursor(scope, next)
	return &s
}

type hideResponse struct {
	OK     bool   `json:"ok"`
	Hidden string `json:"hidden"`
}

func (h *Handler) hide(c *gin.Context) error {
	t, err := owner(c)
	if err != nil {
		return err
	}
	id, err := h.Feeds.Hide(c.Request.Context(), t, c.Param("item_id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, hideResponse{OK: true, Hidden: id})
	return nil
}
