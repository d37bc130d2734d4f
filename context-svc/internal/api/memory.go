package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/pkg/clock"
)

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

func (h *Handler) getMemory(c *gin.Context) error {
	t, err := owner(c)
	if err != nil {
		return err
	}
	p, err := h.Profiles.Profile(c.Request.Context(), t.ObjectID)
	if err != nil {
		return err
	}
	list, next, err := h.versionPage(c, t.ObjectID, true)
	if err != nil {
		return err
	}
	resp := memoryResponse{Memory: p.Memory, Version: p.MemoryVersion, Versions: make([]memoryVersion, len(list)), NextCursor: next}
	for i, v := range list {
		resp.Versions[i] = memoryVersion{Version: v.Version, CreatedAt: clock.Format(v.UpdatedAt)}
	}
	c.JSON(http.StatusOK, resp)
	return nil
}

func (h *Handler) putMemory(c *gin.Context) error {
	p, err := ownerWrite(c, decodeTextBody, h.Profiles.PutMemory)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, versionResponse{OK: true, Version: p.Version})
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
	p, n, err := h.Profiles.RebuildMemory(c.Request.Context(), t)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, rebuildResponse{OK: true, Version: p.Version, RebuiltFromDecisions: n})
	return nil
}
