// Package http serves context-svc's routes: the public profile (llm.txt), structured context,
// versions, rules, sources, context links, repository sync, the context coach, decision memory,
// the agent card, and the internal rules read of mailbox-svc.
package http

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/context-svc/internal/gitsync"
	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/outbound"
)

// Identity is what the handlers need of identity-svc.
type Identity interface {
	Object(ctx context.Context, objectID string) (*contract.Object, error)
	ReportProfile(ctx context.Context, objectID string, update contract.ProfileUpdate) error
}

// Mailbox is what the rules read needs of mailbox-svc.
type Mailbox interface {
	BlockedHashes(ctx context.Context, objectID string) ([]string, error)
}

// Handler holds what the routes need.
type Handler struct {
	Store    *store.Store
	Outbox   *events.Outbox
	Identity Identity
	Mailbox  Mailbox
	// Fetcher fetches URL sources; Git pulls llm.txt from repositories.
	Fetcher *outbound.Client
	Git     *gitsync.Syncer
	// BaseURL is the public address of the API, for links and the messaging section.
	BaseURL string
	// SourceRefresh is how long fetched source content is reused before it is fetched again.
	SourceRefresh time.Duration
	Log           *slog.Logger
	// ETags validates the public reads (llm.txt, agent card, rules, coach); every write replaces it.
	ETags *httpx.ETags
}

// Register mounts the routes on api (a group that already requires an internal token).
func Register(api *gin.RouterGroup, h *Handler) {
	o := api.Group("/api/objects/:hash")
	cacheable := h.ETags.Cacheable(authn.PublicTargetID)
	o.GET("/llm.txt", cacheable, h.getLLMTxt)
	o.PUT("/llm.txt", h.putLLMTxt)
	o.GET("/context", h.getContext)
	o.PUT("/context", h.putContext)
	o.GET("/versions", h.versions)
	o.GET("/rules", h.ETags.Cacheable(publicRules), h.getRules)
	o.PUT("/rules", h.putRules)
	o.GET("/sources", h.listSources)
	o.POST("/sources", h.createSource)
	o.GET("/context-links", h.listLinks)
	o.POST("/context-links", h.createLink)
	o.PUT("/sync", h.configureSync)
	o.POST("/sync", h.pullSync)
	o.GET("/context-coach.txt", cacheable, h.coach)
	o.GET("/decision-memory", h.getMemory)
	o.PUT("/decision-memory", h.putMemory)
	o.POST("/decision-memory", h.rebuildMemory)
	o.GET("/agent-card.json", cacheable, h.agentCard)

	api.GET("/api/context-links/:linkId", h.getLink)
	api.GET("/context/:linkId", h.linkPage)

	api.GET("/internal/v1/objects/:id/rules", h.internalRules)
	api.GET("/internal/v1/objects/:id/profile", h.internalProfile)
}

// Content types of the text routes.
const (
	textPlain    = "text/plain; charset=utf-8"
	textMarkdown = "text/markdown; charset=utf-8"
)

// profile returns the object's profile, materialising it from identity-svc when the
// object.created event has not arrived yet (read-your-writes right after creation).
func (h *Handler) profile(ctx context.Context, objectID string) (*store.Profile, error) {
	p, err := h.Store.Profile(ctx, objectID)
	if !errors.Is(err, store.ErrNotFound) {
		return p, err
	}
	obj, err := h.Identity.Object(ctx, objectID)
	switch {
	case errors.Is(err, identity.ErrNotFound):
		return nil, httpx.NotFound("object")
	case err != nil:
		return nil, httpx.Unavailable(err)
	}
	return h.Store.Materialise(ctx, *obj)
}

// publicRules is the cache key of a rules read: the owner's blocked list lives in mailbox-svc,
// whose writes do not replace context-svc's validator, so that read is never cached.
func publicRules(c *gin.Context) string {
	if c.Query("show_blocked_list") != "" {
		return ""
	}
	return authn.PublicTargetID(c)
}

// target returns the object named by the route's {hash}.
func target(c *gin.Context) (*authn.Target, bool) {
	t := authn.TargetFrom(c)
	if t == nil {
		httpx.Abort(c, httpx.NotFound("object"))
		return nil, false
	}
	return t, true
}

// callerOwns reports whether a public route's caller presented a key of the object that may
// read it (the owner key, or a sub-key with the read scope).
func callerOwns(c *gin.Context, t *authn.Target) bool {
	p := authn.PrincipalFrom(c)
	return p != nil && p.ObjectID == t.ObjectID && p.HasScope(authn.ScopeRead)
}

// readable returns the target of a public profile read, refusing a private object to anyone but
// its owner with a 404 that does not reveal it.
func readable(c *gin.Context) (*authn.Target, bool) {
	t, ok := target(c)
	if !ok {
		return nil, false
	}
	if t.Visibility == "private" {
		if !callerOwns(c, t) {
			httpx.Abort(c, httpx.NotFound("object"))
			return nil, false
		}
		c.Header("Cache-Control", "private, no-store")
	}
	return t, true
}

// write applies a context write as the object's next version, relays its events and tells
// identity-svc the new version before the caller answers, so that the object read shows it.
func (h *Handler) write(c *gin.Context, t *authn.Target, change string, apply func(p *store.Profile) error,
	extra ...func(p *store.Profile) []events.Pending) (*store.Profile, error) {
	ctx := c.Request.Context()
	rid := httpx.RequestID(c)
	var evs []events.Pending // those of the last attempt, the one that was written
	edit := store.Edit{
		Change: change, Apply: apply, At: clock.Now(), Outbox: h.Outbox,
		Events: func(p *store.Profile) []events.Pending {
			evs = []events.Pending{events.MustNew(events.TopicContext, events.ContextUpdated, t.ObjectID, t.Hash, rid,
				contract.ContextUpdatedData{Version: p.Version, UpdatedAt: clock.Format(p.UpdatedAt), Title: p.Title, Change: change})}
			for _, f := range extra {
				evs = append(evs, f(p)...)
			}
			return evs
		},
	}
	p, err := h.Store.Write(ctx, t.ObjectID, edit)
	if errors.Is(err, store.ErrNotFound) { // the first write of an object created just now
		if _, err = h.profile(ctx, t.ObjectID); err != nil {
			return nil, err
		}
		p, err = h.Store.Write(ctx, t.ObjectID, edit)
	}
	if errors.Is(err, store.ErrContention) {
		return nil, httpx.Conflict(httpx.CodeConflict, "too many concurrent writes to this context, retry")
	}
	if err != nil {
		return nil, err
	}
	h.ETags.Changed(ctx, t.ObjectID)
	h.Outbox.Confirm(evs...)
	if err := h.reportVersion(ctx, p); err != nil {
		return nil, httpx.Unavailable(err)
	}
	return p, nil
}

// reportVersion tells identity-svc an object's new version and title, retrying briefly. It
// reports the current profile when a concurrent write has gone further, so that a report that
// arrives late carries the newest version and title rather than an older one.
func (h *Handler) reportVersion(ctx context.Context, p *store.Profile) error {
	var err error
	for attempt, wait := 0, 50*time.Millisecond; attempt < 3; attempt, wait = attempt+1, wait*4 {
		if head, err := h.Store.Profile(ctx, p.ObjectID); err == nil && head.Version > p.Version {
			p = head
		}
		update := contract.ProfileUpdate{Version: p.Version, UpdatedAt: clock.Format(p.UpdatedAt), Title: p.Title}
		if err = h.Identity.ReportProfile(ctx, p.ObjectID, update); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
	h.Log.Warn("reporting a context version to identity-svc failed", "object_id", p.ObjectID, "version", p.Version, "error", err)
	return err
}

// storeError maps a store error to the public answer.
func storeError(err error, what string) error {
	if errors.Is(err, store.ErrNotFound) {
		return httpx.NotFound(what)
	}
	return err
}

// decodeEmpty accepts a request without a body, or with an empty JSON object, for routes that
// take none.
func decodeEmpty(c *gin.Context) error {
	if c.Request.ContentLength == 0 {
		return nil
	}
	return httpx.Decode(c, &struct{}{})
}
