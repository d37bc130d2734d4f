package api

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/feed-svc/internal/network"
	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/httpx"
)

// globalQuery reads the query of /api/feed and /feed.txt; kinds maps the route's kind names to
// row kinds. The cursor is checked against the list the query reads.
func globalQuery(c *gin.Context, kinds map[string]string) (network.Query, error) {
	var q network.Query
	if raw := c.Query("kind"); raw != "" {
		kind, ok := kinds[raw]
		if !ok {
			names := strings.Join(slices.Sorted(maps.Keys(kinds)), ", ")
			return q, httpx.BadRequest(httpx.CodeInvalidKind, "kind must be one of %s", names)
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
	var err error
	q.Limit, q.Before, err = httpx.PageKey(c, q.Scope())
	return q, err
}

// globalPage is a page of the network's feed as the API shows it.
type globalPage struct {
	Items      []network.Row `json:"items"`
	Total      int64         `json:"total"`
	NextCursor *string       `json:"next_cursor"`
}

func (h *Handler) global(c *gin.Context) error {
	q, err := globalQuery(c, map[string]string{network.KindNewSvc: network.KindNewSvc, network.KindItem: network.KindItem})
	if err != nil {
		return err
	}
	q.Bodies = true
	return h.polled(c, httpx.NetworkFeed, "application/json; charset=utf-8", false, func() ([]byte, error) {
		page, err := h.Network.Global(c.Request.Context(), q)
		if err != nil {
			return nil, err
		}
		return json.Marshal(globalPage{Items: page.Items, Total: page.Total, NextCursor: cursor(q.Scope(), page.Next)})
	})
}

func (h *Handler) globalText(c *gin.Context) error {
	q, err := globalQuery(c, map[string]string{"created": network.KindNewSvc, network.KindItem: network.KindItem})
	if err != nil {
		return err
	}
	return h.polled(c, httpx.NetworkFeed, "text/plain; charset=utf-8", false, func() ([]byte, error) {
		page, err := h.Network.Global(c.Request.Context(), q)
		if err != nil {
			return nil, err
		}
		return feedText(page, cursor(q.Scope(), page.Next), h.PollInterval.Minutes()), nil
	})
}

// feedText renders the global feed for agents: one row per line, tab-separated, newest first.
func feedText(page *network.GlobalPage, next *string, pollMinutes float64) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "# svc network feed: %d rows, newest first\n", page.Total)
	fmt.Fprintf(&b, "# poll at most every %.0f minutes and send If-None-Match with the ETag\n", pollMinutes)
	b.WriteString("# posted_at\tkind\tbox\ttitle\tby\ttags\n")
	for _, r := range page.Items {
		by := ""
		if r.Who != nil && r.Who.Svc != nil {
			by = *r.Who.Svc
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\t%s\n", r.PostedAt, textKind(r.Kind), r.Hash, oneLine(r.Title),
			by, strings.Join(r.Tags, ","))
	}
	if next != nil {
		fmt.Fprintf(&b, "# next page: cursor=%s\n", *next)
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

// activityPage is a page of public activity as the API shows it.
type activityPage struct {
	Items      []network.Activity `json:"items"`
	NextCursor *string            `json:"next_cursor"`
}

func (h *Handler) activity(c *gin.Context) error {
	limit, before, err := httpx.PageKey(c, store.ActivityScope)
	if err != nil {
		return err
	}
	page, err := h.Network.Activity(c.Request.Context(), before, limit)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, activityPage{Items: page.Items, NextCursor: cursor(store.ActivityScope, page.Next)})
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
