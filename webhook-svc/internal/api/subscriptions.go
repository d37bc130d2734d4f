package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/webhook-svc/internal/webhook"
)

type contextSubscriptionResponse struct {
	Subscription contextSubscription `json:"subscription"`
}

type contextSubscription struct {
	ID          string   `json:"id"`
	Hash        string   `json:"hash"`
	CallbackURL string   `json:"callback_url"`
	Events      []string `json:"events"`
	Secret      string   `json:"secret"`
	CreatedAt   string   `json:"created_at"`
}

func (h *Handler) createContextSubscription(c *gin.Context) error {
	p, t, err := caller(c)
	if err != nil {
		return err
	}
	var req createWebhookRequest
	if err := httpx.Decode(c, &req); err != nil {
		return err
	}
	created, err := h.Subscriptions.CreateContextSubscription(c.Request.Context(), p, t,
		webhook.Draft{CallbackURL: *req.CallbackURL, Events: req.Events})
	if err != nil {
		return err
	}
	sub := created.Subscription
	c.JSON(http.StatusCreated, contextSubscriptionResponse{Subscription: contextSubscription{
		ID: sub.ID, Hash: t.Hash, CallbackURL: sub.CallbackURL, Events: sub.Events, Secret: created.Secret,
		CreatedAt: clock.Format(sub.CreatedAt),
	}})
	return nil
}

func (h *Handler) deleteContextSubscription(c *gin.Context) error {
	p, t, err := caller(c)
	if err != nil {
		return err
	}
	id := c.Query("subscription_id")
	if id == "" {
		return httpx.BadRequest(httpx.CodeMissingField, "query parameter subscription_id is required")
	}
	if err := h.Subscriptions.DeleteContextSubscription(c.Request.Context(), p, t, id); err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"ok": true, "deleted": id})
	return nil
}
