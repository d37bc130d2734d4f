// Package gitsync pulls one file from a git remote with go-git: a shallow fetch of one branch
// into memory, then a read of the file at the branch's head commit. https remotes go through the
// SSRF-guarded HTTP client; file:// remotes (local repositories) are allowed only when private
// addresses are, for tests and the all-in-one mode.
//
// A remote is untrusted: a small pack can declare a huge object that inflates from a few bytes of
// zeros. So the pack is read up to MaxPack bytes, every object's inflated size (the pack header's,
// and a delta's target size) is checked against MaxInflate before anything is inflated into
// memory, and a pull takes a turn of the process's outbound.Limiter (with ingest, source pulls and claims).
package gitsync

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/netip"
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

	"github.com/svcdev/svc/pkg/outbound"
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
	// ErrRepoTooLarge says that the fetched pack, or what it would inflate to, is over the limits.
	ErrRepoTooLarge = errors.New("repository too large")
)

// Limits of the sync configuration.
const (
	MaxRepoURL  = 2000
	MaxBranch   = 200
	MaxFilePath = 500
)

// Defaults of the fetch bounds.
const (
	DefaultMaxPack    = 8 << 20
	DefaultMaxInflate = 32 << 20
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

// Syncer pulls files. Build it with New, which gives it the process's outbound limiter.
type Syncer struct {
	// HTTP is the guarded client for https remotes.
	HTTP *http.Client
	// AllowFile admits file:// remotes.
	AllowFile bool
	// AllowPrivate admits remotes on loopback and private addresses (as the guarded client does).
	AllowPrivate bool
	// MaxFile bounds the pulled file.
	MaxFile int64
	// Timeout bounds a whole pull, every request to the remote included (none when zero).
	Timeout time.Duration
	// MaxPack bounds the bytes of the fetched pack (DefaultMaxPack when zero).
	MaxPack int64
	// MaxInflate bounds the sum of the inflated sizes of the pack's objects (DefaultMaxInflate
	// when zero).
	MaxInflate int64

	limiter *outbound.Limiter
}

// New returns a Syncer whose pulls each take a turn of limiter: past its queue a pull is refused
// with an *outbound.BusyError.
func New(s Syncer, limiter *outbound.Limiter) *Syncer {
	s.limiter = limiter
	return &s
}

// Validate checks a remote's URL, branch and file path, and returns them normalised (the path
// without a leading ./).
func (s *Syncer) Validate(r Remote) (Remote, error) {
	if r.URL == "" || len(r.URL) > MaxRepoURL {
		return r, fmt.Errorf("%w: repo_url must be 1 to %d characters", ErrRemote, MaxRepoURL)
	}
	ep, err := s.endpoint(r.URL)
	if err != nil {
		return r, err
	}
	if err := s.checkHost(ep.Host); err != nil {
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

// checkHost refuses, when a remote is configured, what the guarded client would refuse when it
// is pulled: a literal address it may not dial (loopback, private, link-local, metadata, …) or a
// localhost name (RFC 6761: always loopback). Other names are checked when dialled.
func (s *Syncer) checkHost(host string) error {
	if host == "" { // a file:// remote
		return nil
	}
	name := strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if ip, err := netip.ParseAddr(name); err == nil {
		if reason := outbound.Refused(ip, s.AllowPrivate); reason != "" {
			return &outbound.RefusedError{Addr: ip.String(), Reason: reason}
		}
	}
	if !s.AllowPrivate && (name == "localhost" || strings.HasSuffix(name, ".localhost")) {
		return &outbound.RefusedError{Addr: name, Reason: "loopback"}
	}
	return nil
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
	release, err := s.limiter.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
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
	if err := s.fetch(ctx, sess, adv, ref.Hash(), st); err != nil {
		return nil, err
	}
	return s.readFile(st, ref.Hash(), r.Path)
}

// fetch asks for the one commit (depth 1 where the server can shorten history, without blobs
// over the file limit where it can filter) and stores the packfile's objects once the pack is
// known to stay within the bounds.
func (s *Syncer) fetch(ctx context.Context, sess transport.UploadPackSession, adv *packp.AdvRefs, want plumbing.Hash, st *memory.Storage) error {
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
	if s.MaxFile > 0 && adv.Capabilities.Supports(capability.Filter) {
		req.Filter = packp.FilterBlobLimit(uint64(s.MaxFile), packp.BlobLimitPrefixNone)
		if err := req.Capabilities.Set(capability.Filter); err != nil {
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
	data, err := readPack(pack, orDefault(s.MaxPack, DefaultMaxPack))
	if err != nil {
		return err
	}
	if err := checkInflate(data, orDefault(s.MaxInflate, DefaultMaxInflate)); err != nil {
		return err
	}
	if err := packfile.UpdateObjectStorage(st, bytes.NewReader(data)); err != nil {
		return fmt.Errorf("git packfile: %w", err)
	}
	return nil
}

func orDefault(v, def int64) int64 {
	if v > 0 {
		return v
	}
	return def
}

// readPack reads the whole pack, refusing one over limit bytes.
func readPack(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("git fetch: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: the pack is over %d bytes", ErrRepoTooLarge, limit)
	}
	return data, nil
}

// checkInflate scans the pack's object headers and refuses it when the inflated sizes they declare
// add up to more than limit. A delta's header gives the delta's own size, so its target size is
// read from the start of the delta (inflating at most the delta, itself within the limit). go-git
// then refuses any object that inflates past its declared size.
func checkInflate(data []byte, limit int64) error {
	sc := packfile.NewScanner(bytes.NewReader(data))
	_, objects, err := sc.Header()
	if err != nil {
		return fmt.Errorf("git packfile: %w", err)
	}
	var total int64
	for range objects {
		h, err := sc.NextObjectHeader()
		if err != nil {
			return fmt.Errorf("git packfile: %w", err)
		}
		size := h.Length
		if h.Length <= limit && (h.Type == plumbing.OFSDeltaObject || h.Type == plumbing.REFDeltaObject) {
			if size, err = deltaTarget(sc); err != nil {
				return err
			}
		}
		if total += max(size, h.Length); total > limit {
			return fmt.Errorf("%w: its objects inflate to over %d bytes", ErrRepoTooLarge, limit)
		}
	}
	return nil
}

// deltaTarget reads the target size from the header of the delta the scanner is at.
func deltaTarget(sc *packfile.Scanner) (int64, error) {
	head := &prefixWriter{max: 2 * binary.MaxVarintLen64}
	if _, _, err := sc.NextObject(head); err != nil {
		return 0, fmt.Errorf("git packfile: %w", err)
	}
	r := bytes.NewReader(head.buf)
	if _, err := binary.ReadUvarint(r); err != nil { // the base's size
		return 0, fmt.Errorf("git packfile: invalid delta: %w", err)
	}
	target, err := binary.ReadUvarint(r)
	if err != nil || target > math.MaxInt64 {
		return 0, fmt.Errorf("git packfile: invalid delta target size")
	}
	return int64(target), nil
}

// prefixWriter keeps the first max bytes written to it and discards the rest.
type prefixWriter struct {
	buf []byte
	max int
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	if n := min(len(p), w.max-len(w.buf)); n > 0 {
		w.buf = append(w.buf, p[:n]...)
	}
	return len(p), nil
}

func (s *Syncer) readFile(st *memory.Storage, commitHash plumbing.Hash, filePath string) (*Result, error) {
	commit, err := object.GetCommit(st, commitHash)
	if err != nil {
		return nil, fmt.Errorf("git commit: %w", err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("git tree: %w", err)
	}
	entry, err := tree.FindEntry(filePath)
	if errors.Is(err, object.ErrFileNotFound) || errors.Is(err, object.ErrEntryNotFound) || errors.Is(err, object.ErrDirectoryNotFound) ||
		errors.Is(err, plumbing.ErrObjectNotFound) || (err == nil && !entry.Mode.IsFile()) {
		return nil, fmt.Errorf("%w: file %q", ErrNotFound, filePath)
	}
	if err != nil {
		return nil, fmt.Errorf("git file: %w", err)
	}
	blob, err := object.GetBlob(st, entry.Hash)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		// The server filtered the blob out: it is over the file limit.
		return nil, fmt.Errorf("%w: over %d bytes", ErrTooLarge, s.MaxFile)
	}
	if err != nil {
		return nil, fmt.Errorf("git file: %w", err)
	}
	f := object.NewFile(filePath, entry.Mode, blob)
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
