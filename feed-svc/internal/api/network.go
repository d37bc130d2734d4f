package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/feed-svc/internal/network"
	"github.com/svcdev/svc/pkg/httpx"
)

// globalQuery reads the query of /api/feed and /feed.txt; kinds maps the route's kind names to
// row kinds.
func globalQuery(c *gin.Context, kinds map[string]string) (network.Query, error) {
	limit, cursor, err := httpx.PageParams(c, network.ValidRowID)
	if err != nil {
		return network.Query{}, err
	}
	q := network.Query{Limit: limit, Cursor: cursor}
	if raw := c.Query("kind"); raw != "" {
		kind, ok := kinds[raw]
		if !ok {
			names := make([]string, 0, len(kinds))
			for k := range kinds {
				names = append(names, k)
			}
			return q, httpx.BadRequest(httpx.CodeInvalidKind, "kind must be one of %s", strings.Join(names, ", "))
		}
		q.Kind = kind
	}
	switch c.Query("unique") {
	case "", "0":
	case "1":
		q.Unique = true
	default:
		return q, httpx.BadRequest(httpx.CodeInvalidRequest, "unique must be 0 or 1")
	}
	return q, nil
}

func (h *Handler) global(c *gin.Context) error {
	q, err := globalQuery(c, map[string]string{network.KindNewSvc: network.KindNewSvc, network.KindItem: network.KindItem})
	if err != nil {
		return err
	}
	page, err := h.Network.Global(c.Request.Context(), q)
	if err != nil {
		return err
	}
	body, err := json.Marshal(page)
	if err != nil {
		return err
	}
	return h.polled(c, "application/json; charset=utf-8", body, false)
}

func (h *Handler) globalText(c *gin.Context) error {
	q, err := globalQuery(c, map[string]string{"created": network.KindNewSvc, network.KindItem: network.KindItem})
	if err != nil {
		return err
	}
	page, err := h.Network.Global(c.Request.Context(), q)
	if err != nil {
		return err
	}
	return h.polled(c, "text/plain; charset=utf-8", feedText(page, h.PollInterval.Minutes()), false)
}

// feedText renders the global feed for agents: one row per line, tab-separated, newest first.
func feedText(page *network.GlobalPage, pollMinutes float64) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# svc network feed: %d rows, newest first\n", page.Total)
	fmt.Fprintf(&b, "# poll at most every %.0f minutes and send If-None-Match with the ETag\n", pollMinutes)
	b.WriteString("# posted_at\tkind\tbox\ttitle\tby\ttags\n")
	for _, r := range page.Items {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\t%s\n", r.PostedAt, textKind(r.Kind), r.Hash, oneLine(r.Title),
			r.Who.Svc, strings.Join(r.Tags, ","))
	}
	if page.NextCursor != nil {
		fmt.Fprintf(&b, "# next page: cursor=%s\n", *page.NextCursor)
	}
	return []byte(b.String())
}

func textKind(kind string) string {
	if kind == network.KindNewSvc {
		return "created"
	}
	return kind
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func (h *Handler) activity(c *gin.Context) error {
	limit, cursor, err := httpx.PageParams(c, network.ValidRowID)
	if err != nil {
		return err
	}
	page, err := h.Network.Activity(c.Request.Context(), cursor, limit)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, page)
	return nil
}

func (h *Handler) stats(c *gin.Context) error {
	s, err := h.Network.Stats(c.Request.Context())
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, s)
	return nil
}

func (h *Handler) analytics(c *gin.Context) error {
	t, err := owner(c)
	if err != nil {
		return err
	}
	days, err := network.ParseRange(c.Query("range"))
	if err != nil {
		return err
	}
	a, err := h.Network.Analytics(c.Request.Context(), t.ObjectID, days)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, a)
	return nil
}
