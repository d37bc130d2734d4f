package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/context-svc/internal/profile"
)

type syncConfigResponse struct {
	OK       bool   `json:"ok"`
	RepoURL  string `json:"repo_url"`
	Branch   string `json:"branch"`
	FilePath string `json:"file_path"`
}

type syncPullResponse struct {
	OK      bool   `json:"ok"`
	Version int    `json:"version"`
	Commit  string `json:"commit"`
}

func (h *Handler) configureSync(c *gin.Context) error {
	cfg, err := ownerWrite(c, decodeJSON[profile.SyncSettings], h.Profiles.ConfigureSync)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, syncConfigResponse{OK: true, RepoURL: cfg.RepoURL, Branch: cfg.Branch, FilePath: cfg.FilePath})
	return nil
}

// pullSync fetches the configured file and makes it the owner's markdown.
func (h *Handler) pullSync(c *gin.Context) error {
	t, err := owner(c)
	if err != nil {
		return err
	}
	if err := decodeEmpty(c); err != nil {
		return err
	}
	p, commit, err := h.Profiles.PullSync(c.Request.Context(), t)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, syncPullResponse{OK: true, Version: p.Version, Commit: commit})
	return nil
}
