package api

import (
	"maps"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/webhook-svc/internal/store"
	"github.com/svcdev/svc/webhook-svc/internal/webhook"
)

// webhookResponse is a subscription as its owner sees it: header names, never their values, and
// the secret only in the answer that creates it.
type webhookResponse struct {
	ID          string   `json:"id"`
	Hash        string   `json:"hash"`
	CallbackURL string   `json:"callback_url"`
	Events      []string `json:"events"`
	HeaderNames []string `json:"header_names"`
	Secret      string   `json:"secret,omitempty"`
	CreatedAt   string   `json:"created_at"`
	UpdatedAt   string   `json:"updated_at"`
}

type webhookListResponse struct {
	Webhooks   []webhookResponse `json:"webhooks"`
	NextCursor *string           `json:"next_cursor"`
}

type healthResponse struct {
	Status         string  `json:"status"`
	DisabledReason *string `json:"disabled_reason"`
	LastSuccessAt  *string `json:"last_success_at"`
	LastFailureAt  *string `json:"last_failure_at"`
	FailingSince   *string `json:"failing_since"`
}

type attemptResponse struct {
	At         string  `json:"at"`
	StatusCode *int    `json:"status_code"`
	Error      *string `json:"error"`
	DurationMS int64   `json:"duration_ms"`
}

type deliveryResponse struct {
	ID            string            `json:"id"`
	EventID       string            `json:"event_id"`
	Event         string            `json:"event"`
	Status        string            `json:"status"`
	Attempts      []attemptResponse `json:"attempts"`
	NextAttemptAt *string           `json:"next_attempt_at"`
	ReplayOf      *string           `json:"replay_of"`
	CreatedAt     string            `json:"created_at"`
}

type webhookStatusResponse struct {
	webhookResponse
	Health     healthResponse     `json:"health"`
	Deliveries []deliveryResponse `json:"deliveries"`
}

func webhookView(sub *store.Subscription, hash, secret string) webhookResponse {
	names := slices.AppendSeq([]string{}, maps.Keys(sub.Headers))
	slices.Sort(names)
	return webhookResponse{ID: sub.ID, Hash: hash, CallbackURL: sub.CallbackURL, Events: sub.Events, HeaderNames: names,
		Secret: secret, CreatedAt: clock.Format(sub.CreatedAt), UpdatedAt: clock.Format(sub.UpdatedAt)}
}

func healthView(sub *store.Subscription, h *store.SubscriptionHealth) healthResponse {
	out := healthResponse{Status: "enabled", LastSuccessAt: clock.FormatPtr(h.LastSuccessAt),
		LastFailureAt: clock.FormatPtr(h.LastFailureAt), FailingSince: clock.FormatPtr(h.FailingSince)}
	switch {
	case sub.DisabledAt != nil:
		reason := webhook.DisabledByOwner
		out.Status, out.DisabledReason = "disabled", &reason
	case h.DisabledAt != nil:
		out.Status, out.DisabledReason = "disabled", &h.DisabledReason
	}
	return out
}

func deliveryView(d *store.Delivery) deliveryResponse {
	out := deliveryResponse{ID: d.ID, EventID: d.EventID, Event: d.Event, Status: d.Status, Attempts: []attemptResponse{},
		NextAttemptAt: clock.FormatPtr(d.NextAttemptAt), ReplayOf: orNil(d.ReplayOf), CreatedAt: clock.Format(d.CreatedAt)}
	for _, a := range d.Attempts {
		out.Attempts = append(out.Attempts, attemptResponse{At: clock.Format(a.At), StatusCode: orNil(a.StatusCode),
			Error: orNil(a.Error), DurationMS: a.DurationMS})
	}
	return out
}

// orNil is nil for the zero value (which a view shows as null), else a pointer to v.
func orNil[T comparable](v T) *T {
	if v == *new(T) {
		return nil
	}
	return &v
}

type createWebhookRequest struct {
	CallbackURL *string  `json:"callback_url" required:"true"`
	Events      []string `json:"events"`
}

func (h *Handler) createWebhook(c *gin.Context) error {
	_, t, err := authn.Owner(c)
	if err != nil {
		return err
	}
	var req createWebhookRequest
	if err := httpx.Decode(c, &req); err != nil {
		return err
	}
	created, err := h.Subscriptions.CreateWebhook(c.Request.Context(), t, webhook.Draft{CallbackURL: *req.CallbackURL, Events: req.Events})
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, webhookView(created.Subscription, t.Hash, created.Secret))
	return nil
}

func (h *Handler) listWebhooks(c *gin.Context) error {
	_, t, err := authn.Owner(c)
	if err != nil {
		return err
	}
	list, next, err := subscriptionPage(c, "webhooks:"+t.ObjectID, t, h.Subscriptions.ListWebhooks)
	if err != nil {
		return err
	}
	out := webhookListResponse{Webhooks: []webhookResponse{}, NextCursor: next}
	for i := range list {
		out.Webhooks = append(out.Webhooks, webhookView(&list[i], t.Hash, ""))
	}
	c.JSON(http.StatusOK, out)
	return nil
}

func (h *Handler) getWebhook(c *gin.Context) error {
	_, t, err := authn.Owner(c)
	if err != nil {
		return err
	}
	st, err := h.Subscriptions.Webhook(c.Request.Context(), t, c.Param("subscription_id"))
	if err != nil {
		return err
	}
	out := webhookStatusResponse{webhookResponse: webhookView(st.Subscription, t.Hash, ""), Health: healthView(st.Subscription, st.Health),
		Deliveries: []deliveryResponse{}}
	for i := range st.Deliveries {
		out.Deliveries = append(out.Deliveries, deliveryView(&st.Deliveries[i]))
	}
	c.JSON(http.StatusOK, out)
	return nil
}

type updateWebhookRequest struct {
	CallbackURL *string           `json:"callback_url"`
	Events      []string          `json:"events"`
	Headers     map[string]string `json:"headers"`
	Enabled     *bool             `json:"enabled"`
}

func (h *Handler) updateWebhook(c *gin.Context) error {
	_, t, err := authn.Owner(c)
	if err != nil {
		return err
	}
	var req updateWebhookRequest
	if err := httpx.Decode(c, &req); err != nil {
		return err
	}
	sub, err := h.Subscriptions.UpdateWebhook(c.Request.Context(), t, c.Param("subscription_id"),
		webhook.Change{CallbackURL: req.CallbackURL, Events: req.Events, Headers: req.Headers, Enabled: req.Enabled})
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, webhookView(sub, t.Hash, ""))
	return nil
}

func (h *Handler) deleteWebhook(c *gin.Context) error {
	_, t, err := authn.Owner(c)
	if err != nil {
		return err
	}
	id := c.Param("subscription_id")
	if err := h.Subscriptions.DeleteWebhook(c.Request.Context(), t, id); err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"ok": true, "deleted": id})
	return nil
}

func (h *Handler) rotateSecret(c *gin.Context) error {
	_, t, err := authn.Owner(c)
	if err != nil {
		return err
	}
	created, err := h.Subscriptions.RotateSecret(c.Request.Context(), t, c.Param("subscription_id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, webhookView(created.Subscription, t.Hash, created.Secret))
	return nil
}

func (h *Handler) replay(c *gin.Context) error {
	_, t, err := authn.Owner(c)
	if err != nil {
		return err
	}
	d, err := h.Subscriptions.Replay(c.Request.Context(), t, c.Param("subscription_id"), c.Param("delivery_id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusAccepted, deliveryView(d))
	return nil
}
