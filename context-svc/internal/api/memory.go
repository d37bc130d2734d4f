package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/context-svc/internal/profile"
	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/httpx"
)

type memoryVersion struct {
	Version   int    `json:"version"`
	Change    string `json:"change"`
	CreatedAt string `json:"created_at"`
}

type memoryResponse struct {
	Memory     string          `json:"memory"`
	Version    int             `json:"version"`
	Versions   []memoryVersion `json:"versions"`
	NextCursor *string         `json:"next_cursor"`
}

type memoryVersionResponse struct {
	Version   int    `json:"version"`
	Change    string `json:"change"`
	CreatedAt string `json:"created_at"`
	Memory    string `json:"memory"`
}

type rebuildResponse struct {
	OK                   bool `json:"ok"`
	Version              int  `json:"version"`
	RebuiltFromDecisions int  `json:"rebuilt_from_decisions"`
}

// getMemory answers decision memory: the current markdown with a page of its versions, one
// version (version=N), or the current decisions structured (format=json). Its ETag is the
// current memory version, which PUT's If-Match names.
func (h *Handler) getMemory(c *gin.Context) error {
	t, err := owner(c)
	if err != nil {
		return err
	}
	ctx := c.Request.Context()
	format := c.Query("format")
	if format != "" && format != "markdown" && format != "json" {
		return httpx.BadRequest(httpx.CodeInvalidRequest, "format must be json or markdown")
	}
	if raw, one := c.GetQuery("version"); one {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			return httpx.BadRequest(httpx.CodeInvalidRequest, "version must be a positive integer")
		}
		if format == "json" {
			return httpx.BadRequest(httpx.CodeInvalidRequest, "format=json reads the current decisions: it takes no version")
		}
		m, err := h.Profiles.MemoryAt(ctx, t.ObjectID, n)
		if err != nil {
			return err
		}
		c.JSON(http.StatusOK, memoryVersionResponse{Version: m.Version, Change: m.Change, CreatedAt: clock.Format(m.CreatedAt), Memory: m.Body})
		return nil
	}
	m, err := h.Profiles.Memory(ctx, t.ObjectID)
	if err != nil {
		return err
	}
	c.Header("ETag", memoryETag(m.Version))
	if format == "json" {
		return h.memoryJSON(c, t.ObjectID, m.Version)
	}
	scope := "decision-memory:" + t.ObjectID
	limit, before, err := httpx.PageSeq(c, scope)
	if err != nil {
		return err
	}
	list, err := h.Profiles.MemoryVersions(ctx, t.ObjectID, int(before), limit+1)
	if err != nil {
		return err
	}
	list, next := seqPage(list, limit, scope, func(v store.Memory) int64 { return int64(v.Version) })
	resp := memoryResponse{Memory: m.Body, Version: m.Version, Versions: make([]memoryVersion, len(list)), NextCursor: next}
	for i, v := range list {
		resp.Versions[i] = memoryVersion{Version: v.Version, Change: v.Change, CreatedAt: clock.Format(v.CreatedAt)}
	}
	c.JSON(http.StatusOK, resp)
	return nil
}

// putMemory replaces decision memory with a new version of its own (the context version does
// not move); with If-Match only while decision memory is still at the version it names.
func (h *Handler) putMemory(c *gin.Context) error {
	ifMatch, err := memoryIfMatch(c)
	if err != nil {
		return err
	}
	t, err := owner(c)
	if err != nil {
		return err
	}
	body, err := decodeTextBody(c)
	if err != nil {
		return err
	}
	m, err := h.Profiles.PutMemory(c.Request.Context(), t, body, ifMatch)
	if err != nil {
		return err
	}
	c.Header("ETag", memoryETag(m.Version))
	c.JSON(http.StatusOK, versionResponse{OK: true, Version: m.Version})
	return nil
}

// rebuildMemory replaces decision memory by the major decisions recorded in the object's threads.
func (h *Handler) rebuildMemory(c *gin.Context) error {
	t, err := owner(c)
	if err != nil {
		return err
	}
	if err := decodeEmpty(c); err != nil {
		return err
	}
	m, n, err := h.Profiles.RebuildMemory(c.Request.Context(), t)
	if err != nil {
		return err
	}
	c.Header("ETag", memoryETag(m.Version))
	c.JSON(http.StatusOK, rebuildResponse{OK: true, Version: m.Version, RebuiltFromDecisions: n})
	return nil
}

// memoryETag is the entity tag of decision memory: its version.
func memoryETag(version int) string { return `"` + strconv.Itoa(version) + `"` }

// memoryIfMatch reads If-Match of a decision-memory write: nil when absent or "*", else the
// version it names (quoted, as GET's ETag gives it, or bare).
func memoryIfMatch(c *gin.Context) (*int, error) {
	raw := strings.TrimSpace(c.GetHeader("If-Match"))
	if raw == "" || raw == "*" {
		return nil, nil
	}
	v, err := strconv.Atoi(strings.Trim(strings.TrimPrefix(raw, "W/"), `"`))
	if err != nil || v < 0 {
		return nil, httpx.BadRequest(httpx.CodeInvalidRequest, `If-Match must be the ETag of GET …/decision-memory, for example "12"`)
	}
	return &v, nil
}

type memoryDecision struct {
	ID         string              `json:"id"`
	ThreadID   string              `json:"thread_id"`
	Title      string              `json:"title"`
	Body       string              `json:"body"`
	Confidence *float64            `json:"confidence"`
	CreatedAt  string              `json:"created_at"`
	ValidFrom  *string             `json:"valid_from"`
	ValidUntil *string             `json:"valid_until"`
	Supersedes []supersededSummary `json:"supersedes"`
}

type supersededSummary struct {
	ID    string  `json:"id"`
	Title *string `json:"title"`
}

type supersededDecision struct {
	ID           string `json:"id"`
	ThreadID     string `json:"thread_id"`
	Title        string `json:"title"`
	CreatedAt    string `json:"created_at"`
	SupersededBy string `json:"superseded_by"`
	SupersededAt string `json:"superseded_at"`
}

// memoryJSON answers the structured decision memory: the current major decisions (newest
// first) with what each superseded, and the superseded ones; the markdown a rebuild writes is
// rendered from the same data.
func (h *Handler) memoryJSON(c *gin.Context, objectID string, version int) error {
	current, superseded, err := h.Profiles.Decisions(c.Request.Context(), objectID)
	if err != nil {
		return err
	}
	titles := map[string]string{}
	for _, d := range append(append([]profile.Decision{}, current...), superseded...) {
		titles[d.NodeID] = d.Title
	}
	out := struct {
		Version    int                  `json:"version"`
		Decisions  []memoryDecision     `json:"decisions"`
		Superseded []supersededDecision `json:"superseded"`
	}{Version: version, Decisions: []memoryDecision{}, Superseded: []supersededDecision{}}
	for _, d := range current {
		md := memoryDecision{ID: d.NodeID, ThreadID: d.ThreadID, Title: d.Title, Body: d.Body, Confidence: d.Confidence,
			CreatedAt: clock.Format(d.CreatedAt), ValidFrom: clock.FormatPtr(d.ValidFrom), ValidUntil: clock.FormatPtr(d.ValidUntil),
			Supersedes: []supersededSummary{}}
		for _, id := range d.Supersedes {
			s := supersededSummary{ID: id}
			if t, ok := titles[id]; ok {
				s.Title = &t
			}
			md.Supersedes = append(md.Supersedes, s)
		}
		out.Decisions = append(out.Decisions, md)
	}
	for _, d := range superseded {
		out.Superseded = append(out.Superseded, supersededDecision{ID: d.NodeID, ThreadID: d.ThreadID, Title: d.Title,
			CreatedAt: clock.Format(d.CreatedAt), SupersededBy: d.SupersededBy.NodeID, SupersededAt: clock.Format(d.SupersededBy.CreatedAt)})
	}
	c.JSON(http.StatusOK, out)
	return nil
}
