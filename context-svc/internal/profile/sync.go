package profile

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/svcdev/svc/context-svc/internal/gitsync"
	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/outbound"
)

// Defaults of the sync configuration.
const (
	DefaultBranch   = "main"
	DefaultFilePath = "llm.txt"
)

// SyncSettings is a sync configuration as the owner sends it.
type SyncSettings struct {
	RepoURL  *string `json:"repo_url" required:"true"`
	Branch   *string `json:"branch"`
	FilePath *string `json:"file_path"`
}

// ConfigureSync validates and stores the repository that llm.txt is pulled from.
func (s *Service) ConfigureSync(ctx context.Context, t Target, req *SyncSettings) (*store.SyncConfig, error) {
	if *req.RepoURL == "" {
		return nil, apierr.MissingField("repo_url")
	}
	remote := gitsync.Remote{URL: *req.RepoURL, Branch: DefaultBranch, Path: DefaultFilePath}
	if req.Branch != nil {
		remote.Branch = *req.Branch
	}
	if req.FilePath != nil {
		remote.Path = *req.FilePath
	}
	remote, err := s.Git.Validate(remote)
	if err != nil {
		return nil, syncError(err)
	}
	cfg := &store.SyncConfig{ObjectID: t.ObjectID, RepoURL: remote.URL, Branch: remote.Branch, FilePath: remote.Path}
	if err := s.Store.SetSync(ctx, cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// PullSync fetches the configured file and makes it the owner's markdown; it returns the
// current profile and the commit pulled. A file equal to the current markdown makes no new
// version.
func (s *Service) PullSync(ctx context.Context, t Target) (*store.Profile, string, error) {
	p, err := s.Profile(ctx, t.ObjectID)
	if err != nil {
		return nil, "", err
	}
	cfg, err := s.Store.Sync(ctx, t.ObjectID)
	if errors.Is(err, mongox.ErrNotFound) {
		return nil, "", apierr.Conflict(apierr.CodeConflict, "no repository is configured: PUT the sync configuration first")
	}
	if err != nil {
		return nil, "", err
	}
	res, err := s.Git.Pull(ctx, gitsync.Remote{URL: cfg.RepoURL, Branch: cfg.Branch, Path: cfg.FilePath})
	if err != nil {
		s.Log.Info("sync pull failed", "request_id", t.RequestID, "object_id", t.ObjectID, "error", err)
		return nil, "", syncError(err)
	}
	if !utf8.Valid(res.Content) {
		return nil, "", apierr.BadRequest(apierr.CodeInvalidRequest, "the file is not UTF-8 text")
	}
	content := string(res.Content)
	if content != p.LLMTxt {
		if p, err = s.write(ctx, t, store.ChangeSync, func(p *store.Profile) error {
			setLLMTxt(p, content)
			return nil
		}); err != nil {
			return nil, "", err
		}
	}
	// The pull is done and answered; the recorded commit is informational.
	if err := s.Store.RecordSync(ctx, cfg, res.Commit, clock.Now()); err != nil {
		s.Log.Warn("recording a sync failed", "object_id", t.ObjectID, "error", err)
	}
	return p, res.Commit, nil
}

// syncError maps a gitsync error to the public answer; messages never echo the remote's.
func syncError(err error) error {
	switch {
	case errors.Is(err, gitsync.ErrRemote):
		return apierr.BadRequest(apierr.CodeInvalidURL, "repo_url must be an https URL of a public git repository, without credentials")
	case errors.Is(err, outbound.ErrRefused):
		return apierr.BadRequest(apierr.CodeInvalidURL, "the repository's address is not allowed")
	case errors.Is(err, gitsync.ErrInput):
		return apierr.BadRequest(apierr.CodeInvalidRequest, "%s", strings.TrimPrefix(err.Error(), gitsync.ErrInput.Error()+": "))
	case errors.Is(err, gitsync.ErrNotFound):
		return apierr.BadRequest(apierr.CodeInvalidRequest, "the repository, the branch or the file was not found")
	case errors.Is(err, gitsync.ErrPrivate):
		return apierr.BadRequest(apierr.CodeInvalidRequest, "the repository needs credentials: only public repositories can be synced")
	case errors.Is(err, gitsync.ErrRepoTooLarge):
		return apierr.BadRequest(apierr.CodeInvalidRequest, "the repository is too large to sync: fetch a branch of a smaller repository")
	case errors.Is(err, outbound.ErrBusy):
		var busy *outbound.BusyError
		errors.As(err, &busy)
		e := apierr.Errorf(http.StatusServiceUnavailable, apierr.CodeUnavailable, "this service is pulling as many repositories as it may at once: retry later")
		e.RetryAfter = busy.RetryAfter
		return e
	case errors.Is(err, gitsync.ErrTooLarge):
		return apierr.BadRequest(apierr.CodeInvalidRequest, "the file is larger than %d bytes", apierr.MaxTextBytes)
	}
	// The remote failed: unreachable, not a git server, an untrusted certificate. The remote is
	// the caller's input, not a backing service of ours.
	return apierr.BadRequest(apierr.CodeInvalidRequest, "the repository could not be fetched from repo_url")
}
