package http

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/context-svc/internal/profile"
	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/httpx"
)

// MaxRebuildDecisions bounds the decisions a rebuild reads, newest first.
const MaxRebuildDecisions = 500

type memoryVersion struct {
	Version   int    `json:"version"`
	CreatedAt string `json:"created_at"`
}

type memoryResponse struct {
	Memory     string          `json:"memory"`
	Version    int             `json:"version"`
	Versions   []memoryVersion `json:"versions"`
	NextCursor *string         `json:"next_cursor"`
}

type rebuildResponse struct {
	OK                   bool `json:"ok"`
	Version              int  `json:"version"`
	RebuiltFromDecisions int  `json:"rebuilt_from_decisions"`
}

func (h *Handler) getMemory(c *gin.Context) {
	_, t, ok := authn.RequireOwner(c)
	if !ok {
		return
	}
	p, err := h.profile(c.Request.Context(), t.ObjectID)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	h.listVersions(c, t.ObjectID, true, func(list []store.Profile, next *string) any {
		resp := memoryResponse{Memory: p.Memory, Version: p.MemoryVersion, Versions: make([]memoryVersion, len(list)), NextCursor: next}
		for i, v := range list {
			resp.Versions[i] = memoryVersion{Version: v.Version, CreatedAt: clock.Format(v.UpdatedAt)}
		}
		return resp
	})
}

func (h *Handler) putMemory(c *gin.Context) {
	_, t, ok := authn.RequireOwner(c)
	if !ok {
		return
	}
	body, err := decodeTextBody(c)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	p, err := h.write(c, t, store.ChangeDecisionMemory, func(p *store.Profile) error {
		p.Memory = body
		return nil
	})
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	c.JSON(http.StatusOK, versionResponse{OK: true, Version: p.Version})
}

// rebuildMemory replaces decision memory by the major decisions recorded in the object's
// threads, as learned from graph-svc's decision.recorded events.
func (h *Handler) rebuildMemory(c *gin.Context) {
	_, t, ok := authn.RequireOwner(c)
	if !ok {
		return
	}
	if err := decodeEmpty(c); err != nil {
		httpx.Abort(c, err)
		return
	}
	recorded, err := h.Store.RecentDecisions(c.Request.Context(), t.ObjectID, MaxRebuildDecisions)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	var major []profile.Decision
	for _, d := range recorded {
		pd := profile.Decision{ThreadID: d.ThreadID, NodeID: d.NodeID, Title: d.Title, Body: d.Body,
			Confidence: d.Confidence, CreatedAt: d.CreatedAt}
		if profile.Major(pd) {
			major = append(major, pd)
		}
	}
	p, err := h.write(c, t, store.ChangeDecisionMemory, func(p *store.Profile) error {
		p.Memory = profile.DecisionMemory(major, clock.Now())
		return nil
	})
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	c.JSON(http.StatusOK, rebuildResponse{OK: true, Version: p.Version, RebuiltFromDecisions: len(major)})
}
