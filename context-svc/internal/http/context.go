package http

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/context-svc/internal/profile"
	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
)

// ProfileSection is the id of the section that stands for the owner's markdown.
const ProfileSection = "profile"

type section struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	Title    string `json:"title"`
	Included bool   `json:"included"`
}

type contextResponse struct {
	Hash     string          `json:"hash"`
	Version  int             `json:"version"`
	LLMTxt   string          `json:"llm_txt"`
	Rules    *contract.Rules `json:"rules"`
	Sections []section       `json:"sections"`
}

type sectionChange struct {
	ID       *string `json:"id"`
	Included *bool   `json:"included"`
}

type putContextRequest struct {
	LLMTxt   *string         `json:"llm_txt"`
	Rules    json.RawMessage `json:"rules"`
	Sections []sectionChange `json:"sections"`
}

type versionResponse struct {
	OK      bool `json:"ok"`
	Version int  `json:"version"`
}

func (h *Handler) getContext(c *gin.Context) {
	_, t, ok := authn.RequireOwner(c)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	p, err := h.profile(ctx, t.ObjectID)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	sources, err := h.Store.ListSources(ctx, store.SourcePage{ObjectID: t.ObjectID, Limit: MaxSources})
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	resp := contextResponse{Hash: t.Hash, Version: p.Version, LLMTxt: p.LLMTxt, Rules: p.Rules,
		Sections: []section{{ID: ProfileSection, Kind: "llm_txt", Title: p.Title, Included: true}}}
	for _, s := range sources {
		resp.Sections = append(resp.Sections, section{ID: s.ID, Kind: s.Kind, Title: s.Title, Included: slices.Contains(p.Included, s.ID)})
	}
	c.JSON(http.StatusOK, resp)
}

func (h *Handler) putContext(c *gin.Context) {
	_, t, ok := authn.RequireOwner(c)
	if !ok {
		return
	}
	var req putContextRequest
	if err := httpx.Decode(c, &req); err != nil {
		httpx.Abort(c, err)
		return
	}
	if req.LLMTxt == nil {
		httpx.Abort(c, httpx.MissingField("llm_txt"))
		return
	}
	if len(*req.LLMTxt) > httpx.MaxTextBytes {
		httpx.Abort(c, textTooLarge("llm_txt"))
		return
	}
	rules, err := contract.DecodeRules(req.Rules)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	named, wanted, err := sectionChanges(req.Sections)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	ctx := c.Request.Context()
	known, err := h.Store.SourcesByID(ctx, t.ObjectID, named)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	if len(known) != len(wanted) {
		httpx.Abort(c, httpx.BadRequest(httpx.CodeInvalidRequest, "sections name a source this object does not have"))
		return
	}
	knownIDs := make([]string, len(known))
	for i, s := range known {
		knownIDs[i] = s.ID
	}
	var toggled []string
	p, err := h.write(c, t, store.ChangeContext, func(p *store.Profile) error {
		setLLMTxt(p, *req.LLMTxt)
		if len(req.Rules) > 0 {
			p.Rules = rules
		}
		p.Included, toggled = profile.Include(p.Included, knownIDs, wanted)
		return nil
	}, func(p *store.Profile) []events.Pending {
		var evs []events.Pending
		for i := range known {
			if slices.Contains(toggled, known[i].ID) {
				evs = append(evs, sourceChanged(c, t, &known[i], wanted[known[i].ID], "updated"))
			}
		}
		return evs
	})
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	c.JSON(http.StatusOK, versionResponse{OK: true, Version: p.Version})
}

// sectionChanges validates the sections of a context write into the source ids they name, in
// order, and source id → included. The profile section is always included and cannot be left
// out.
func sectionChanges(in []sectionChange) ([]string, map[string]bool, error) {
	if len(in) > MaxSources+1 {
		return nil, nil, httpx.BadRequest(httpx.CodeInvalidRequest, "sections has more than %d entries", MaxSources+1)
	}
	var named []string
	wanted := map[string]bool{}
	for i, s := range in {
		switch {
		case s.ID == nil || *s.ID == "":
			return nil, nil, httpx.MissingField("sections[" + strconv.Itoa(i) + "].id")
		case s.Included == nil:
			return nil, nil, httpx.MissingField("sections[" + strconv.Itoa(i) + "].included")
		case *s.ID == ProfileSection:
			if !*s.Included {
				return nil, nil, httpx.BadRequest(httpx.CodeInvalidRequest, "the profile section is always included")
			}
			continue
		case !strings.HasPrefix(*s.ID, "src_"):
			return nil, nil, httpx.BadRequest(httpx.CodeInvalidRequest, "sections[%d].id is not a section id", i)
		}
		if _, dup := wanted[*s.ID]; dup {
			return nil, nil, httpx.BadRequest(httpx.CodeInvalidRequest, "section %s is listed twice", *s.ID)
		}
		named = append(named, *s.ID)
		wanted[*s.ID] = *s.Included
	}
	return named, wanted, nil
}

type versionSummary struct {
	Version   int    `json:"version"`
	Change    string `json:"change"`
	CreatedAt string `json:"created_at"`
}

type versionListResponse struct {
	Versions   []versionSummary `json:"versions"`
	NextCursor *string          `json:"next_cursor"`
}

type versionDetail struct {
	Version        int      `json:"version"`
	Change         string   `json:"change"`
	CreatedAt      string   `json:"created_at"`
	Title          string   `json:"title"`
	LLMTxt         string   `json:"llm_txt"`
	SourceIDs      []string `json:"source_ids"`
	DecisionMemory string   `json:"decision_memory"`
}

func (h *Handler) versions(c *gin.Context) {
	_, t, ok := authn.RequireOwner(c)
	if !ok {
		return
	}
	ctx := c.Request.Context()
	if _, err := h.profile(ctx, t.ObjectID); err != nil {
		httpx.Abort(c, err)
		return
	}
	if raw, one := c.GetQuery("version"); one {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			httpx.Abort(c, httpx.BadRequest(httpx.CodeInvalidRequest, "version must be a positive integer"))
			return
		}
		v, err := h.Store.VersionOf(ctx, t.ObjectID, n)
		if err != nil {
			httpx.Abort(c, storeError(err, "version"))
			return
		}
		included := v.Included
		if included == nil {
			included = []string{}
		}
		c.JSON(http.StatusOK, versionDetail{Version: v.Version, Change: v.Change, CreatedAt: clock.Format(v.UpdatedAt),
			Title: v.Title, LLMTxt: v.LLMTxt, SourceIDs: included, DecisionMemory: v.Memory})
		return
	}
	h.listVersions(c, t.ObjectID, false, func(list []store.Profile, next *string) any {
		resp := versionListResponse{Versions: make([]versionSummary, len(list)), NextCursor: next}
		for i, v := range list {
			resp.Versions[i] = versionSummary{Version: v.Version, Change: v.Change, CreatedAt: clock.Format(v.UpdatedAt)}
		}
		return resp
	})
}

// listVersions pages through an object's versions (or those that changed decision memory),
// newest first, and answers with what render makes of a page.
func (h *Handler) listVersions(c *gin.Context, objectID string, memoryOnly bool, render func([]store.Profile, *string) any) {
	limit, raw, err := httpx.PageParams(c, func(s string) bool { n, err := strconv.Atoi(s); return err == nil && n > 0 })
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	before, _ := strconv.Atoi(raw)
	list, err := h.Store.ListVersions(c.Request.Context(), store.VersionQuery{
		ObjectID: objectID, Before: before, Limit: limit + 1, MemoryOnly: memoryOnly,
	})
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	list, next := httpx.Page(list, limit, func(v store.Profile) string { return strconv.Itoa(v.Version) })
	c.JSON(http.StatusOK, render(list, next))
}
