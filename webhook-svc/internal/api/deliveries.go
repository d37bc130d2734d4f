package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/webhook-svc/internal/store"
	"github.com/svcdev/svc/webhook-svc/internal/webhook"
)

type attemptEntryView struct {
	DeliveryID string  `json:"delivery_id"`
	EventID    string  `json:"event_id"`
	Event      string  `json:"event"`
	Attempt    int     `json:"attempt"`
	Outcome    string  `json:"outcome"`
	StatusCode *int    `json:"status_code"`
	Error      *string `json:"error"`
	DurationMS int64   `json:"duration_ms"`
	At         string  `json:"at"`
}

type attemptListResponse struct {
	Attempts   []attemptEntryView `json:"attempts"`
	NextCursor *string            `json:"next_cursor"`
}

// timeQuery reads an optional RFC 3339 time from the query.
func timeQuery(c *gin.Context, name string) (time.Time, error) {
	raw := c.Query(name)
	if raw == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, raw)
	if err != nil {
		return time.Time{}, httpx.BadRequest(httpx.CodeInvalidRequest, "%s must be an RFC 3339 time", name)
	}
	return t.UTC(), nil
}

// listAttempts pages a webhook's delivery log, newest first, filtered by outcome and time.
func (h *Handler) listAttempts(c *gin.Context) error {
	_, t, err := authn.Owner(c)
	if err != nil {
		return err
	}
	id, outcome := c.Param("subscription_id"), c.Query("outcome")
	if err := webhook.CheckOutcome(outcome); err != nil {
		return err
	}
	scope := store.AttemptScope(id, outcome)
	limit, before, err := httpx.PageKey(c, scope)
	if err != nil {
		return err
	}
	q := webhook.AttemptQuery{Outcome: outcome, Before: before, Limit: limit}
	if q.Since, err = timeQuery(c, "since"); err != nil {
		return err
	}
	if q.Until, err = timeQuery(c, "until"); err != nil {
		return err
	}
	entries, next, err := h.Subscriptions.Attempts(c.Request.Context(), t, id, q)
	if err != nil {
		return err
	}
	out := attemptListResponse{Attempts: []attemptEntryView{}}
	for _, e := range entries {
		out.Attempts = append(out.Attempts, attemptEntryView{DeliveryID: e.DeliveryID, EventID: e.EventID, Event: e.Event,
			Attempt: e.Attempt, Outcome: e.Outcome, StatusCode: orNil(e.StatusCode), Error: orNil(e.Error),
			DurationMS: e.DurationMS, At: clock.Format(e.At)})
	}
	if next != "" {
		cur := httpx.KeyCursor(scope, next)
		out.NextCursor = &cur
	}
	c.JSON(http.StatusOK, out)
	return nil
}

type attemptCountsResponse struct {
	Since     string `json:"since"`
	Until     string `json:"until"`
	Attempts  int64  `json:"attempts"`
	Succeeded int64  `json:"succeeded"`
	Failed    int64  `json:"failed"`
}

// defaultWindow is the window of attempt counts asked for without since.
const defaultWindow = 24 * time.Hour

// countAttempts counts a webhook's attempts by outcome over a window (the last 24 hours unless
// since and until say otherwise).
func (h *Handler) countAttempts(c *gin.Context) error {
	_, t, err := authn.Owner(c)
	if err != nil {
		return err
	}
	since, err := timeQuery(c, "since")
	if err != nil {
		return err
	}
	until, err := timeQuery(c, "until")
	if err != nil {
		return err
	}
	if until.IsZero() {
		until = clock.Now().Add(time.Millisecond)
	}
	if since.IsZero() {
		since = until.Add(-defaultWindow)
	}
	if !since.Before(until) {
		return httpx.BadRequest(httpx.CodeInvalidRequest, "since must be before until")
	}
	n, err := h.Subscriptions.CountAttempts(c.Request.Context(), t, c.Param("subscription_id"), since, until)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, attemptCountsResponse{Since: clock.Format(n.Since), Until: clock.Format(n.Until),
		Attempts: n.Attempts, Succeeded: n.Succeeded, Failed: n.Failed})
	return nil
}

type recoverRequest struct {
	Since *time.Time `json:"since" required:"true"`
}

type recoverResponse struct {
	Recovered int     `json:"recovered"`
	More      bool    `json:"more"`
	NextSince *string `json:"next_since"`
}

// recoverDeliveries sends again every delivery of a webhook that failed since a time.
func (h *Handler) recoverDeliveries(c *gin.Context) error {
	_, t, err := authn.Owner(c)
	if err != nil {
		return err
	}
	var req recoverRequest
	if err := httpx.Decode(c, &req); err != nil {
		return err
	}
	r, err := h.Subscriptions.Recover(c.Request.Context(), t, c.Param("subscription_id"), req.Since.UTC())
	if err != nil {
		return err
	}
	out := recoverResponse{Recovered: r.Recovered, More: r.More}
	if r.More {
		out.NextSince = clock.FormatPtr(&r.Next)
	}
	c.JSON(http.StatusAccepted, out)
	return nil
}
