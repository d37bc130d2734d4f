package profile

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"time"

	"github.com/svcdev/svc/context-svc/internal/gitsync"
	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/controls"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/outbound"
)

// Versions are the versions of objects' profiles (store.Store).
type Versions interface {
	Profile(ctx context.Context, objectID string) (*store.Profile, error)
	Materialise(ctx context.Context, obj contract.Object) (*store.Profile, error)
	Write(ctx context.Context, objectID string, e store.Edit) (*store.Profile, []events.Pending, error)
	VersionOf(ctx context.Context, objectID string, version int) (*store.Profile, error)
	ListVersions(ctx context.Context, q store.VersionQuery) ([]store.Profile, error)
}

// Sources are objects' context sources and what was fetched from them (store.Store).
type Sources interface {
	InsertSource(ctx context.Context, src *store.Source, limit int, outbox events.Stager, evs ...events.Pending) error
	ListSources(ctx context.Context, q store.SourcePage) ([]store.Source, string, error)
	DeleteSource(ctx context.Context, objectID, id string) (*store.Source, error)
	SourcesByID(ctx context.Context, objectID string, ids []string) ([]store.Source, error)
	RecordFetch(ctx context.Context, id, content, fetchErr string, at time.Time) error
}

// Links are context links (store.Store).
type Links interface {
	InsertLink(ctx context.Context, l *store.Link) error
	Link(ctx context.Context, id string) (*store.Link, error)
	ListLinks(ctx context.Context, q store.LinkPage) ([]store.Link, string, error)
}

// Syncs are repository sync configurations (store.Store).
type Syncs interface {
	Sync(ctx context.Context, objectID string) (*store.SyncConfig, error)
	SetSync(ctx context.Context, cfg *store.SyncConfig) error
	RecordSync(ctx context.Context, cfg *store.SyncConfig, commit string, at time.Time) error
}

// Decisions are the decisions learned from graph-svc (store.Store).
type Decisions interface {
	RecentDecisions(ctx context.Context, objectID string, limit int) ([]store.Decision, error)
}

// Blocks is the projection of the object's sender blocks (store.Store).
type Blocks interface {
	BlockedHashes(ctx context.Context, recipientID string) ([]string, error)
}

// Store is the repository the use cases work on: store.Store.
type Store interface {
	Versions
	Sources
	Links
	Syncs
	Decisions
	Blocks
	Memory
}

// Identity is what the use cases need of identity-svc.
type Identity interface {
	Object(ctx context.Context, objectID string) (*contract.Object, error)
	ReportProfile(ctx context.Context, objectID string, update contract.ProfileUpdate) error
}

// Outbox stages the events of a write before it and relays them once it is done (events.Outbox).
type Outbox interface {
	events.Stager
	Confirm(evs ...events.Pending)
}

// Fetcher fetches URL sources (outbound.Client).
type Fetcher interface {
	CheckURL(raw string) (*url.URL, error)
	Get(ctx context.Context, raw string) (*outbound.Response, error)
}

// Git pulls llm.txt from repositories (gitsync.Syncer).
type Git interface {
	Validate(r gitsync.Remote) (gitsync.Remote, error)
	Pull(ctx context.Context, r gitsync.Remote) (*gitsync.Result, error)
}

// ETags replaces the validator of an object's public reads when what they show changes
// (httpx.ETags).
type ETags interface {
	Changed(ctx context.Context, objectID string)
}

// Service runs context-svc's use cases.
type Service struct {
	Store    Store
	Outbox   Outbox
	Identity Identity
	// Signer signs agent cards with the object's key; nil serves them unsigned.
	Signer  CardSigner
	Fetcher Fetcher
	Git     Git
	// SourceRefresh is how long fetched source content is reused before it is fetched again.
	SourceRefresh time.Duration
	Log           *slog.Logger
	ETags         ETags
	// Controls raises an object's rules control version before a rules write answers, so that
	// mailbox-svc judges every send after the 200 by the new rules (pkg/controls); nil raises
	// none (the rules then bind once mailbox-svc consumes their context.updated).
	Controls ControlVersions
}

// ControlVersions raises an object's control version (controls.Versions).
type ControlVersions interface {
	Raise(ctx context.Context, kind, objectID string, version int64) error
}

// Target is the object a use case acts on, with the request that asks.
type Target struct {
	ObjectID  string
	Hash      string
	RequestID string
}

// Profile returns the object's current profile, materialising it from identity-svc when the
// object.created event has not arrived yet (read-your-writes right after creation).
func (s *Service) Profile(ctx context.Context, objectID string) (*store.Profile, error) {
	p, err := s.Store.Profile(ctx, objectID)
	if !errors.Is(err, mongox.ErrNotFound) {
		return p, err
	}
	obj, err := s.Identity.Object(ctx, objectID)
	switch {
	case errors.Is(err, identity.ErrNotFound):
		return nil, apierr.NotFound("object")
	case err != nil:
		return nil, apierr.Unavailable(err)
	}
	return s.Store.Materialise(ctx, *obj)
}

// write applies a context write as the object's next version with its events (staged, then
// confirmed once the version is written) and tells identity-svc the new version before the
// caller answers, so that the object read shows it. extra adds events of the same write, built
// from the new version.
func (s *Service) write(ctx context.Context, t Target, change string, apply func(p *store.Profile) error,
	extra ...func(p *store.Profile) []events.Pending) (*store.Profile, error) {
	edit := store.Edit{
		Change: change, Apply: apply, At: clock.Now(), Outbox: s.Outbox,
		Events: func(p *store.Profile) []events.Pending {
			evs := []events.Pending{contextUpdated(t, p)}
			for _, f := range extra {
				evs = append(evs, f(p)...)
			}
			return evs
		},
	}
	p, evs, err := s.Store.Write(ctx, t.ObjectID, edit)
	if errors.Is(err, mongox.ErrNotFound) { // the first write of an object created just now
		if _, err = s.Profile(ctx, t.ObjectID); err != nil {
			return nil, err
		}
		p, evs, err = s.Store.Write(ctx, t.ObjectID, edit)
	}
	if errors.Is(err, store.ErrContention) {
		return nil, apierr.Conflict(apierr.CodeConflict, "too many concurrent writes to this context, retry")
	}
	if err != nil {
		return nil, err
	}
	s.ETags.Changed(ctx, t.ObjectID)
	s.Outbox.Confirm(evs...)
	if err := s.raiseRules(ctx, p); err != nil {
		return nil, err
	}
	// The write is committed: a report that misses is made by identity-svc's consumer of the
	// context.updated event instead, a moment later, and the write answers its success.
	_ = s.reportVersion(ctx, p)
	return p, nil
}

// raiseRules raises the object's rules control version to the version a write that may change
// the rules made. Its event carries the same version, and mailbox-svc's projection records it
// once applied: until then a send asks context-svc (Admission). A failure is a 503, so that the
// writer retries rather than take a 200 the rules may not keep at once.
func (s *Service) raiseRules(ctx context.Context, p *store.Profile) error {
	if s.Controls == nil || (p.Change != store.ChangeRules && p.Change != store.ChangeContext) {
		return nil
	}
	if err := s.Controls.Raise(ctx, controls.Rules, p.ObjectID, int64(p.Version)); err != nil {
		return apierr.Retryable(err)
	}
	return nil
}

// Admission is what the object's current rules say of admission, for mailbox-svc while its
// projection of them is behind a rules write.
func (s *Service) Admission(ctx context.Context, objectID string) (contract.Admission, error) {
	p, err := s.Profile(ctx, objectID)
	if err != nil {
		return contract.Admission{}, err
	}
	return p.Rules.Admission(), nil
}

// reportVersion tells identity-svc an object's new version and title, retrying briefly. It
// reports the current profile when a concurrent write has gone further, so that a report that
// arrives late carries the newest version and title rather than an older one.
func (s *Service) reportVersion(ctx context.Context, p *store.Profile) error {
	var err error
	for attempt, wait := 0, 50*time.Millisecond; attempt < 3; attempt, wait = attempt+1, wait*4 {
		if head, err := s.Store.Profile(ctx, p.ObjectID); err == nil && head.Version > p.Version {
			p = head
		}
		update := contract.ProfileUpdate{Version: p.Version, UpdatedAt: clock.Format(p.UpdatedAt), Title: p.Title}
		if err = s.Identity.ReportProfile(ctx, p.ObjectID, update); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
	s.Log.Warn("reporting a context version to identity-svc failed", "object_id", p.ObjectID, "version", p.Version, "error", err)
	return err
}

// notFound maps the store's not-found to the public answer naming what.
func notFound(err error, what string) error {
	if errors.Is(err, mongox.ErrNotFound) {
		return apierr.NotFound(what)
	}
	return err
}
