package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/context-svc/internal/profile"
	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/httpx"
)

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

type putContextRequest struct {
	LLMTxt   *string                 `json:"llm_txt" required:"true"`
	Rules    json.RawMessage         `json:"rules"`
	Sections []profile.SectionChange `json:"sections"`
}

func (h *Handler) getContext(c *gin.Context) error {
	t, err := owner(c)
	if err != nil {
		return err
	}
	v, err := h.Profiles.Context(c.Request.Context(), t.ObjectID)
	if err != nil {
		return err
	}
	p := v.Profile
	resp := contextResponse{Hash: t.Hash, Version: p.Version, LLMTxt: p.LLMTxt, Rules: p.Rules,
		Sections: []section{{ID: profile.ProfileSection, Kind: "llm_txt", Title: p.Title, Included: true}}}
	for _, s := range v.Sources {
		resp.Sections = append(resp.Sections, section{ID: s.ID, Kind: s.Kind, Title: s.Title, Included: slices.Contains(p.Included, s.ID)})
	}
	c.JSON(http.StatusOK, resp)
	return nil
}

func (h *Handler) putContext(c *gin.Context) error {
	p, err := ownerWrite(c, decodeContext, h.Profiles.PutContext)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, versionResponse{OK: true, Version: p.Version})
	return nil
}

// decodeContext reads the change of PUT context.
func decodeContext(c *gin.Context) (profile.ContextChange, error) {
	var req putContextRequest
	if err := httpx.Decode(c, &req); err != nil {
		return profile.ContextChange{}, err
	}
	if len(*req.LLMTxt) > httpx.MaxTextBytes {
		return profile.ContextChange{}, profile.TextTooLarge("llm_txt")
	}
	rules, err := contract.DecodeRules(req.Rules)
	return profile.ContextChange{LLMTxt: *req.LLMTxt, SetRules: len(req.Rules) > 0, Rules: rules, Sections: req.Sections}, err
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
	Version   int      `json:"version"`
	Change    string   `json:"change"`
	CreatedAt string   `json:"created_at"`
	Title     string   `json:"title"`
	LLMTxt    string   `json:"llm_txt"`
	SourceIDs []string `json:"source_ids"`
}

func (h *Handler) versions(c *gin.Context) error {
	t, err := owner(c)
	if err != nil {
		return err
	}
	ctx := c.Request.Context()
	p, err := h.Profiles.Profile(ctx, t.ObjectID)
	if err != nil {
		return err
	}
	if raw, one := c.GetQuery("version"); one {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			return httpx.BadRequest(httpx.CodeInvalidRequest, "version must be a positive integer")
		}
		v, err := h.Profiles.Version(ctx, t.ObjectID, n)
		if err != nil {
			return err
		}
		included := v.Included
		if included == nil {
			included = []string{}
		}
		c.JSON(http.StatusOK, versionDetail{Version: v.Version, Change: v.Change, CreatedAt: clock.Format(v.UpdatedAt),
			Title: v.Title, LLMTxt: v.LLMTxt, SourceIDs: included})
		return nil
	}
	list, next, err := h.versionPage(c, p)
	if err != nil {
		return err
	}
	resp := versionListResponse{Versions: make([]versionSummary, len(list)), NextCursor: next}
	for i, v := range list {
		resp.Versions[i] = versionSummary{Version: v.Version, Change: v.Change, CreatedAt: clock.Format(v.UpdatedAt)}
	}
	c.JSON(http.StatusOK, resp)
	return nil
}

// versionPage reads the page of versions that the query asks for, newest first, below the
// current version p. The cursor is the last version listed, bound to the object's list, so that
// one made up is a 400.
func (h *Handler) versionPage(c *gin.Context, p *store.Profile) ([]store.Profile, *string, error) {
	scope := "versions:" + p.ObjectID
	limit, before, err := httpx.PageSeq(c, scope)
	if err != nil {
		return nil, nil, err
	}
	list, err := h.Profiles.Versions(c.Request.Context(), store.VersionQuery{
		ObjectID: p.ObjectID, Top: p.Version, Before: int(before), Limit: limit + 1,
	})
	if err != nil {
		return nil, nil, err
	}
	list, next := seqPage(list, limit, scope, func(v store.Profile) int64 { return int64(v.Version) })
	return list, next, nil
}

// seqPage trims a list read with limit+1 entries to limit, and returns the cursor of the next
// page (the position of the last entry kept, bound to scope), or nil on the last page.
func seqPage[T any](list []T, limit int, scope string, pos func(T) int64) ([]T, *string) {
	if len(list) <= limit {
		return list, nil
	}
	list = list[:limit]
	next := httpx.SeqCursor(scope, pos(list[limit-1]))
	return list, &next
}

// keyCursor is the cursor of the list scope that resumes from the id next (nil for "": no page
// left).
func keyCursor(scope, next string) *string {
	if next == "" {
		return nil
	}
	c := httpx.KeyCursor(scope, next)
	return &c
}
