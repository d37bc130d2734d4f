package http

import (
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/context-svc/internal/gitsync"
	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/outbound"
)

// Defaults of the sync configuration.
const (
	DefaultBranch   = "main"
	DefaultFilePath = "llm.txt"
)

type syncRequest struct {
	RepoURL  *string `json:"repo_url"`
	Branch   *string `json:"branch"`
	FilePath *string `json:"file_path"`
}

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

func (h *Handler) configureSync(c *gin.Context) {
	_, t, ok := authn.RequireOwner(c)
	if !ok {
		return
	}
	var req syncRequest
	if err := httpx.Decode(c, &req); err != nil {
		httpx.Abort(c, err)
		return
	}
	if req.RepoURL == nil || *req.RepoURL == "" {
		httpx.Abort(c, httpx.MissingField("repo_url"))
		return
	}
	remote := gitsync.Remote{URL: *req.RepoURL, Branch: DefaultBranch, Path: DefaultFilePath}
	if req.Branch != nil {
		remote.Branch = *req.Branch
	}
	if req.FilePath != nil {
		remote.Path = *req.FilePath
	}
	remote, err := h.Git.Validate(remote)
	if err != nil {
		httpx.Abort(c, syncError(err))
		return
	}
	ctx := c.Request.Context()
	cfg := &store.SyncConfig{ObjectID: t.ObjectID, RepoURL: remote.URL, Branch: remote.Branch, FilePath: remote.Path}
	if err := h.Store.SetSync(ctx, cfg); err != nil {
		httpx.Abort(c, err)
		return
	}
	c.JSON(http.StatusOK, syncConfigResponse{OK: true, RepoURL: cfg.RepoURL, Branch: cfg.Branch, FilePath: cfg.FilePath})
}

// pullSync fetches the configured file and makes it the owner's markdown. A file equal to the
// current markdown makes no new version.
func (h *Handler) pullSync(c *gin.Context) {
	_, t, ok := authn.RequireOwner(c)
	if !ok {
		return
	}
	if err := decodeEmpty(c); err != nil {
		httpx.Abort(c, err)
		return
	}
	ctx := c.Request.Context()
	p, err := h.profile(ctx, t.ObjectID)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	cfg, err := h.Store.Sync(ctx, t.ObjectID)
	if errors.Is(err, store.ErrNotFound) {
		httpx.Abort(c, httpx.Conflict(httpx.CodeConflict, "no repository is configured: PUT the sync configuration first"))
		return
	}
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	res, err := h.Git.Pull(ctx, gitsync.Remote{URL: cfg.RepoURL, Branch: cfg.Branch, Path: cfg.FilePath})
	if err != nil {
		h.Log.Info("sync pull failed", "request_id", httpx.RequestID(c), "object_id", t.ObjectID, "error", err)
		httpx.Abort(c, syncError(err))
		return
	}
	if !utf8.Valid(res.Content) {
		httpx.Abort(c, httpx.BadRequest(httpx.CodeInvalidRequest, "the file is not UTF-8 text"))
		return
	}
	content := string(res.Content)
	if content != p.LLMTxt {
		if p, err = h.write(c, t, store.ChangeSync, func(p *store.Profile) error {
			setLLMTxt(p, content)
			return nil
		}); err != nil {
			httpx.Abort(c, err)
			return
		}
	}
	if err := h.Store.RecordSync(ctx, cfg, res.Commit, clock.Now()); err != nil {
		h.Log.Warn("recording a sync failed", "object_id", t.ObjectID, "error", err)
	}
	c.JSON(http.StatusOK, syncPullResponse{OK: true, Version: p.Version, Commit: res.Commit})
}

// syncError maps a gitsync error to the public answer; messages never echo the remote's.
func syncError(err error) error {
	switch {
	case errors.Is(err, gitsync.ErrRemote):
		return httpx.BadRequest(httpx.CodeInvalidURL, "repo_url must be an https URL of a public git repository, without credentials")
	case errors.Is(err, outbound.ErrRefused):
		return httpx.BadRequest(httpx.CodeInvalidURL, "the repository's address is not allowed")
	case errors.Is(err, gitsync.ErrInput):
		return httpx.BadRequest(httpx.CodeInvalidRequest, "%s", strings.TrimPrefix(err.Error(), gitsync.ErrInput.Error()+": "))
	case errors.Is(err, gitsync.ErrNotFound):
		return httpx.BadRequest(httpx.CodeInvalidRequest, "the repository, the branch or the file was not found")
	case errors.Is(err, gitsync.ErrPrivate):
		return httpx.BadRequest(httpx.CodeInvalidRequest, "the repository needs credentials: only public repositories can be synced")
	case errors.Is(err, gitsync.ErrRepoTooLarge):
		return httpx.BadRequest(httpx.CodeInvalidRequest, "the repository is too large to sync: fetch a branch of a smaller repository")
	case errors.Is(err, gitsync.ErrBusy):
		return httpx.New(http.StatusTooManyRequests, httpx.CodeRateLimited, "too many syncs are in progress: retry shortly")
	case errors.Is(err, gitsync.ErrTooLarge):
		return httpx.BadRequest(httpx.CodeInvalidRequest, "the file is larger than %d bytes", httpx.MaxTextBytes)
	}
	// The remote failed: unreachable, not a git server, an untrusted certificate. The remote is
	// the caller's input, not a backing service of ours.
	return httpx.BadRequest(httpx.CodeInvalidRequest, "the repository could not be fetched from repo_url")
}
