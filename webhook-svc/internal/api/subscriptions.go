package api

import (
	"net/http"
	"net/url"

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
// which object holds it (by the hash it had then) and the host it delivers to, so that the owner
// can tell strangers' subscriptions apart and remove them. The rest of the callback URL (paths
// and queries often carry the watcher's own tokens), the watcher's internal id and the secret
// are the watcher's alone.
type contextSubscriptionView struct {
	ID           string   `json:"id"`
	WatcherHash  string   `json:"watcher_hash"`
	CallbackHost string   `json:"callback_host"`
	Events       []string `json:"events"`
	CreatedAt    string   `json:"created_at"`
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
	subs, next, err := subscriptionPage(c, "context-subscriptions:"+t.ObjectID, t, h.Subscriptions.ListContextSubscriptions)
	if err != nil {
		return err
	}
	out := contextSubscriptionList{Subscriptions: []contextSubscriptionView{}, NextCursor: next}
	for _, sub := range subs {
		out.Subscriptions = append(out.Subscriptions, contextSubscriptionView{ID: sub.ID, WatcherHash: sub.HolderHash,
			CallbackHost: callbackHost(sub.CallbackURL), Events: sub.Events, CreatedAt: clock.Format(sub.CreatedAt)})
	}
	c.JSON(http.StatusOK, out)
	return nil
}

// callbackHost is the host (and port, when the URL names one) of a stored callback URL, which was
// checked to be an absolute https URL when stored.
func callbackHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}
