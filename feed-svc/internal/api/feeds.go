package api

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/feed-svc/internal/feed"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
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

func (h *Handler) items(c *gin.Context) error {
	t, err := target(c)
	if err != nil {
		return err
	}
	limit, cursor, err := httpx.PageParams(c, feed.ValidItemID)
	if err != nil {
		return err
	}
	page, err := h.Feeds.Items(c.Request.Context(), t, authn.PrincipalFrom(c), cursor, limit)
	if err != nil {
		return err
	}
	body, err := json.Marshal(page)
	if err != nil {
		return err
	}
	return h.polled(c, "application/json; charset=utf-8", body, t.Visibility == "private")
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
