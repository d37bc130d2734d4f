// Package api serves webhook-svc's routes: owner webhooks (create, list, read with health and
// deliveries, update, delete, secret rotation, replay) and context subscriptions. A handler
// decodes, calls a use case of package webhook and responds.
package api

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/webhook-svc/internal/store"
	"github.com/svcdev/svc/webhook-svc/internal/webhook"
)

// Handler holds what the routes need.
type Handler struct {
	Subscriptions *webhook.Subscriptions
}

// Register mounts the routes on api (a group that already requires an internal token).
func Register(api *gin.RouterGroup, h *Handler) {
	o := api.Group("/api/objects/:hash")
	o.POST("/webhooks", httpx.Handle(h.createWebhook))
	o.GET("/webhooks", httpx.Handle(h.listWebhooks))
	o.GET("/webhooks/:subscription_id", httpx.Handle(h.getWebhook))
	o.PATCH("/webhooks/:subscription_id", httpx.Handle(h.updateWebhook))
	o.DELETE("/webhooks/:subscription_id", httpx.Handle(h.deleteWebhook))
	o.POST("/webhooks/:subscription_id/rotate-secret", httpx.Handle(h.rotateSecret))
	o.POST("/webhooks/:subscription_id/deliveries/:delivery_id/replay", httpx.Handle(h.replay))
	o.GET("/webhooks/:subscription_id/attempts", httpx.Handle(h.listAttempts))
	o.GET("/webhooks/:subscription_id/attempt-counts", httpx.Handle(h.countAttempts))
	o.POST("/webhooks/:subscription_id/recover", httpx.Handle(h.recoverDeliveries))
	o.POST("/context-subscriptions", httpx.Handle(h.createContextSubscription))
	o.GET("/context-subscriptions", httpx.Handle(h.listContextSubscriptions))
	o.DELETE("/context-subscriptions", httpx.Handle(h.deleteContextSubscription))
}

// subscriptionPage reads the page of subscriptions of the list scope that the query asks for, with
// list, and the cursor of the next page (nil on the last).
func subscriptionPage(c *gin.Context, scope string, t *authn.Target,
	list func(context.Context, *authn.Target, string, int) ([]store.Subscription, error)) ([]store.Subscription, *string, error) {
	limit, after, err := httpx.PageKey(c, scope)
	if err != nil {
		return nil, nil, err
	}
	subs, err := list(c.Request.Context(), t, after, limit+1)
	if err != nil || len(subs) <= limit {
		return subs, nil, err
	}
	next := httpx.KeyCursor(scope, subs[limit-1].ID)
	return subs[:limit], &next, nil
}

// caller returns the principal and the watched box of a route open to the key of any object. A
// box the principal may not learn of (contract.Visible) is unknown, before anything else is read
// of the request. The principal acts with its key's scope, which the gateway checked.
func caller(c *gin.Context) (*authn.Principal, *authn.Target, error) {
	p, t := authn.PrincipalFrom(c), authn.TargetFrom(c)
	if p == nil {
		return nil, nil, httpx.Unauthorized("an API key is required")
	}
	if t == nil || !contract.Visible(t.Visibility, t.ObjectID, p.ObjectID) {
		return nil, nil, httpx.NotFound("object")
	}
	return p, t, nil
}
