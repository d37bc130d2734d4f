package api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/httpx"
)

// searchMemory answers GET /api/objects/{hash}/memory/search: the owner key, or a sub-key with
// the read and mailbox scopes, searches the memory of the object it belongs to.
func (h *Handler) searchMemory(c *gin.Context) error {
	_, t, err := authn.Owner(c)
	if err != nil {
		return err
	}
	if _, err := caller(c); err != nil { // the read and mailbox scopes, as every graph read
		return err
	}
	q := graph.MemoryQuery{Q: c.Query("q"), PeerHash: c.Query("peer")}
	if raw := c.Query("types"); raw != "" {
		q.Types = strings.Split(raw, ",")
	}
	for _, f := range []struct {
		name string
		to   **time.Time
	}{{"since", &q.Since}, {"until", &q.Until}, {"as_of", &q.AsOf}, {"valid_at", &q.ValidAt}} {
		if *f.to, err = graph.ParseTime(f.name, c.Query(f.name)); err != nil {
			return err
		}
	}
	switch raw := c.Query("include_superseded"); raw {
	case "", "0", "false":
	case "1", "true":
		q.IncludeSuperseded = true
	default:
		return httpx.BadRequest(httpx.CodeInvalidRequest, "include_superseded must be true or false")
	}
	limit, err := memoryLimit(c)
	if err != nil {
		return err
	}
	// The cursor is the offset of the next page in the ranking, bound to the object and the
	// query, so a cursor of another search is refused.
	scope := memoryScope(c, t.ObjectID)
	_, offset, err := httpx.PageSeq(c, scope) // the limit is within httpx.MaxLimit by now
	if err != nil {
		return err
	}
	q.Offset, q.Limit = int(offset), limit
	res, err := h.Graph.SearchMemory(c.Request.Context(), &contract.Principal{ObjectID: t.ObjectID, Hash: t.Hash}, q)
	if err != nil {
		return err
	}
	var next *string
	if res.NextOffset > 0 {
		next = contract.Optional(httpx.SeqCursor(scope, int64(res.NextOffset)))
	}
	c.JSON(http.StatusOK, gin.H{"q": res.Query, "terms": res.Terms, "hits": res.Hits, "next_cursor": next})
	return nil
}

// memoryLimit reads a search's limit: 1 to graph.MaxMemoryHits, 10 when absent. It is read here,
// before the cursor, so that a limit out of bounds is told the search's own bound rather than the
// larger one of every other list (httpx.MaxLimit).
func memoryLimit(c *gin.Context) (int, error) {
	raw := c.Query("limit")
	if raw == "" {
		return 10, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > graph.MaxMemoryHits {
		return 0, httpx.BadRequest(httpx.CodeInvalidRequest, "limit must be an integer from 1 to %d", graph.MaxMemoryHits)
	}
	return n, nil
}

// memoryScope binds a search cursor to the object and every parameter but the page's.
func memoryScope(c *gin.Context, objectID string) string {
	v := c.Request.URL.Query()
	v.Del("cursor")
	v.Del("limit")
	return "memory:" + objectID + ":" + strconv.Quote(v.Encode())
}
