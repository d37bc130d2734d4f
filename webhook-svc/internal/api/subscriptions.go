package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/pkg/authn"
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

// contextSubscriptionView is a context subscription to the owner's box as the owner sees it:
// who holds it and where it delivers, never its secret.
type contextSubscriptionView struct {
	ID          string   `json:"id"`
	WatcherID   string   `json:"watcher_id"`
	CallbackURL string   `json:"callback_url"`
	Events      []string `json:"events"`
	CreatedAt   string   `json:"created_at"`
}

type contextSubscriptionList struct {
	Subscriptions []contextSubscriptionView `json:"subscriptions"`
	NextCursor    *string                   `json:"next_cursor"`
}

// listContextSubscriptions lists every context subscription to the owner's box, so that the
// owner can see and remove strangers' subscriptions.
func (h *Handler) listContextSubscriptions(c *gin.Context) error {
	_, t, err := authn.Owner(c)
	if err != nil {
		return err
	}
	scope := "context-subscriptions:" + t.ObjectID
	limit, after, err := httpx.PageSeq(c, scope)
	if err != nil {
		return err
	}
	subs, next, err := h.Subscriptions.ListContextSubscriptions(c.Request.Context(), t, int(after), limit)
	if err != nil {
		return err
	}
	out := contextSubscriptionList{Subscriptions: []contextSubscriptionView{}}
	for _, sub := range subs {
		out.Subscriptions = append(out.Subscriptions, contextSubscriptionView{ID: sub.ID, WatcherID: sub.CreatorID,
			CallbackURL: sub.CallbackURL, Events: sub.Events, CreatedAt: clock.Format(sub.CreatedAt)})
	}
	if next > 0 {
		cur := httpx.SeqCursor(scope, int64(next))
		out.NextCursor = &cur
	}
	c.JSON(http.StatusOK, out)
	return nil
}
