// Package gitsync pulls one file from a git remote with go-git: a shallow fetch of one branch
// into memory, then a read of the file at the branch's head commit. https remotes go through the
// SSRF-guarded HTTP client; file:// remotes (local repositories) are allowed only when private
// addresses are, for tests and the all-in-one mode.
package gitsync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/packfile"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/go-git/go-git/v5/storage/memory"
)

// Errors of Pull and Validate, each naming what the caller got wrong or what failed.
var (
	// ErrRemote says that the remote URL is not allowed.
	ErrRemote = errors.New("remote not allowed")
	// ErrInput says that the branch or file path is not valid.
	ErrInput = errors.New("invalid sync input")
	// ErrNotFound says that the repository, the branch or the file does not exist.
	ErrNotFound = errors.New("not found in the repository")
	// ErrPrivate says that the remote wants credentials.
	ErrPrivate = errors.New("the repository needs credentials")
	// ErrTooLarge says that the file is larger than the limit.
	ErrTooLarge = errors.New("file too large")
)

// Limits of the sync configuration.
const (
	MaxRepoURL  = 2000
	MaxBranch   = 200
	MaxFilePath = 500
)

// Remote is a file on a branch of a git remote.
type Remote struct {
	URL    string
	Branch string
	Path   string
}

// Result is a pulled file.
type Result struct {
	Commit  string
	Content []byte
}

// Syncer pulls files.
type Syncer struct {
	// HTTP is the guarded client for https remotes.
	HTTP *http.Client
	// AllowFile admits file:// remotes.
	AllowFile bool
	// MaxFile bounds the pulled file.
	MaxFile int64
	// Timeout bounds a whole pull, every request to the remote included (none when zero).
	Timeout time.Duration
}

// Validate checks a remote's URL, branch and file path, and returns them normalised (the path
// without a leading ./).
func (s *Syncer) Validate(r Remote) (Remote, error) {
	if r.URL == "" || len(r.URL) > MaxRepoURL {
		return r, fmt.Errorf("%w: repo_url must be 1 to %d characters", ErrRemote, MaxRepoURL)
	}
	if _, err := s.endpoint(r.URL); err != nil {
		return r, err
	}
	if len(r.Branch) > MaxBranch || plumbing.NewBranchReferenceName(r.Branch).Validate() != nil {
		return r, fmt.Errorf("%w: branch is not a valid branch name", ErrInput)
	}
	p := path.Clean(strings.TrimPrefix(r.Path, "./"))
	if r.Path == "" || len(r.Path) > MaxFilePath || strings.HasPrefix(p, "/") || p == "." || p == ".." ||
		strings.HasPrefix(p, "../") || strings.ContainsRune(p, 0) {
		return r, fmt.Errorf("%w: file_path must be a relative path inside the repository", ErrInput)
	}
	r.Path = p
	return r, nil
}

func (s *Syncer) endpoint(raw string) (*transport.Endpoint, error) {
	lower := strings.ToLower(raw)
	switch {
	case strings.HasPrefix(lower, "https://"):
	case strings.HasPrefix(lower, "file://"):
		if !s.AllowFile {
			return nil, fmt.Errorf("%w: only https remotes are allowed", ErrRemote)
		}
	default:
		return nil, fmt.Errorf("%w: only https remotes are allowed", ErrRemote)
	}
	ep, err := transport.NewEndpoint(raw)
	if err != nil || (ep.Protocol == "https" && (ep.Host == "" || ep.User != "" || ep.Password != "")) {
		return nil, fmt.Errorf("%w: not a valid https URL without credentials", ErrRemote)
	}
	return ep, nil
}

func (s *Syncer) transport(ep *transport.Endpoint) transport.Transport {
	if ep.Protocol == "file" {
		// In-process upload-pack over the local file system: no git binary needed.
		return server.NewClient(localLoader{})
	}
	return githttp.NewClient(s.HTTP)
}

// localLoader opens a local repository: a bare one, or the .git directory of a working tree
// (go-git's own loader takes a working tree's root for the repository itself).
type localLoader struct{}

func (localLoader) Load(ep *transport.Endpoint) (storer.Storer, error) {
	local := *ep
	if st, err := os.Stat(filepath.Join(ep.Path, ".git")); err == nil && st.IsDir() {
		local.Path = filepath.Join(ep.Path, ".git")
	}
	return server.DefaultLoader.Load(&local)
}

// Pull fetches the head commit of the remote's branch (shallow, into memory) and reads the file.
func (s *Syncer) Pull(ctx context.Context, r Remote) (*Result, error) {
	r, err := s.Validate(r)
	if err != nil {
		return nil, err
	}
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.Timeout)
		defer cancel()
	}
	ep, err := s.endpoint(r.URL)
	if err != nil {
		return nil, err
	}
	sess, err := s.transport(ep).NewUploadPackSession(ep, nil)
	if err != nil {
		return nil, classify(err)
	}
	defer sess.Close()
	adv, err := sess.AdvertisedReferencesContext(ctx)
	if err != nil {
		return nil, classify(err)
	}
	refs, err := adv.AllReferences()
	if err != nil {
		return nil, fmt.Errorf("git references: %w", err)
	}
	ref, ok := refs[plumbing.NewBranchReferenceName(r.Branch)]
	if !ok || ref.Type() != plumbing.HashReference {
		return nil, fmt.Errorf("%w: branch %q", ErrNotFound, r.Branch)
	}
	st := memory.NewStorage()
	if err := fetch(ctx, sess, adv, ref.Hash(), st); err != nil {
		return nil, err
	}
	return s.readFile(st, ref.Hash(), r.Path)
}

// fetch asks for the one commit (depth 1 where the server can shorten history) and stores the
// packfile's objects.
func fetch(ctx context.Context, sess transport.UploadPackSession, adv *packp.AdvRefs, want plumbing.Hash, st *memory.Storage) error {
	req := packp.NewUploadPackRequestFromCapabilities(adv.Capabilities)
	req.Wants = []plumbing.Hash{want}
	if adv.Capabilities.Supports(capability.Shallow) {
		req.Depth = packp.DepthCommits(1)
		if err := req.Capabilities.Set(capability.Shallow); err != nil {
			return fmt.Errorf("git request: %w", err)
		}
	}
	if adv.Capabilities.Supports(capability.NoProgress) {
		if err := req.Capabilities.Set(capability.NoProgress); err != nil {
			return fmt.Errorf("git request: %w", err)
		}
	}
	resp, err := sess.UploadPack(ctx, req)
	if err != nil {
		return classify(err)
	}
	defer resp.Close()
	var pack io.Reader = resp
	switch {
	case req.Capabilities.Supports(capability.Sideband64k):
		pack = sideband.NewDemuxer(sideband.Sideband64k, resp)
	case req.Capabilities.Supports(capability.Sideband):
		pack = sideband.NewDemuxer(sideband.Sideband, resp)
	}
	if err := packfile.UpdateObjectStorage(st, pack); err != nil {
		return fmt.Errorf("git packfile: %w", err)
	}
	return nil
}

func (s *Syncer) readFile(st *memory.Storage, commitHash plumbing.Hash, filePath string) (*Result, error) {
	commit, err := object.GetCommit(st, commitHash)
	if err != nil {
		return nil, fmt.Errorf("git commit: %w", err)
	}
	f, err := commit.File(filePath)
	if errors.Is(err, object.ErrFileNotFound) || errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, fmt.Errorf("%w: file %q", ErrNotFound, filePath)
	}
	if err != nil {
		return nil, fmt.Errorf("git file: %w", err)
	}
	if s.MaxFile > 0 && f.Size > s.MaxFile {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrTooLarge, f.Size, s.MaxFile)
	}
	content, err := f.Contents()
	if err != nil {
		return nil, fmt.Errorf("git file: %w", err)
	}
	return &Result{Commit: commit.Hash.String(), Content: []byte(content)}, nil
}

func classify(err error) error {
	switch {
	case errors.Is(err, transport.ErrRepositoryNotFound), errors.Is(err, transport.ErrEmptyRemoteRepository):
		return fmt.Errorf("%w: %v", ErrNotFound, err)
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed):
		return fmt.Errorf("%w: %v", ErrPrivate, err)
	}
	return fmt.Errorf("git fetch: %w", err)
}
