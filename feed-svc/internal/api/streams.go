package api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/feed-svc/internal/stream"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
)

// maxEventID bounds an event id given as Last-Event-ID or after.
const maxEventID = 64

// objectEvents serves GET /api/objects/{hash}/events: the owner's event stream (SSE), or its long
// poll twin (JSON) when after or wait is given.
func (h *Handler) objectEvents(c *gin.Context) error {
	t, err := owner(c)
	if err != nil {
		return err
	}
	keep, err := typesFilter(c.Query("types"))
	if err != nil {
		return err
	}
	list := stream.ObjectList(t.ObjectID)
	_, after := c.GetQuery("after")
	_, wait := c.GetQuery("wait")
	if after || wait {
		return h.pollEvents(c, list, keep)
	}
	last, err := lastEventID(c)
	if err != nil {
		return err
	}
	return h.Streams.SSE(c, list, last, keep)
}

func (h *Handler) pollEvents(c *gin.Context, list string, keep func(stream.Entry) bool) error {
	after := strings.TrimSpace(c.Query("after"))
	if len(after) > maxEventID {
		return httpx.BadRequest(httpx.CodeInvalidRequest, "after is not an event id")
	}
	wait, err := waitParam(c.Query("wait"))
	if err != nil {
		return err
	}
	res, err := h.Streams.Poll(c.Request.Context(), list, after, wait, keep)
	if err != nil {
		return err
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, res)
	return nil
}

// feedStream serves GET /api/feed/stream: the network feed's rows as they are published (SSE).
func (h *Handler) feedStream(c *gin.Context) error {
	last, err := lastEventID(c)
	if err != nil {
		return err
	}
	return h.Streams.SSE(c, stream.FeedList, last, func(stream.Entry) bool { return true })
}

// lastEventID is where a stream resumes: the Last-Event-ID header an EventSource sends when it
// reconnects, or the last_event_id query parameter for a first connection that cannot set it.
func lastEventID(c *gin.Context) (string, error) {
	id := strings.TrimSpace(c.GetHeader("Last-Event-ID"))
	if id == "" {
		id = strings.TrimSpace(c.Query("last_event_id"))
	}
	if len(id) > maxEventID {
		return "", httpx.BadRequest(httpx.CodeInvalidRequest, "Last-Event-ID is not an event id")
	}
	return id, nil
}

// typesFilter reads ?types=message,decision,… (empty: every event).
func typesFilter(raw string) (func(stream.Entry) bool, error) {
	if strings.TrimSpace(raw) == "" {
		return func(stream.Entry) bool { return true }, nil
	}
	want := map[string]bool{}
	for _, t := range strings.Split(raw, ",") {
		t = strings.TrimSpace(t)
		if !publicEvents[t] {
			return nil, httpx.BadRequest(httpx.CodeInvalidRequest,
				"types: %q is not an event (identifier, claim_verified, context_source, context_updated, message, decision)", t)
		}
		want[t] = true
	}
	return func(e stream.Entry) bool { return want[e.Event] }, nil
}

var publicEvents = map[string]bool{
	events.WebhookIdentifier: true, events.WebhookClaimVerified: true, events.WebhookContextSource: true,
	events.WebhookContextUpdated: true, events.WebhookMessage: true, events.WebhookDecision: true,
}

// waitParam reads wait: a duration ("30s") or seconds ("30"), at most stream.MaxWait; 0 when
// absent.
func waitParam(raw string) (time.Duration, error) {
	if raw == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(raw)
	if err != nil {
		n, nerr := strconv.Atoi(raw)
		if nerr != nil {
			return 0, httpx.BadRequest(httpx.CodeInvalidRequest, "wait must be a duration such as 30s")
		}
		d = time.Duration(n) * time.Second
	}
	if d < 0 || d > stream.MaxWait {
		return 0, httpx.BadRequest(httpx.CodeInvalidRequest, "wait must be between 0s and 30s")
	}
	return d, nil
}
