// Package http serves mailbox-svc's routes: public message ingress, mailboxes, threads and their
// read state, sender blocks, and the internal API other services read threads and blocked
// senders from.
package http

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
)

// Identity is what the handlers need of identity-svc: hash resolution (cached) and its internal
// object read.
type Identity interface {
	Resolve(ctx context.Context, hash string) (*identity.Object, error)
	Object(ctx context.Context, objectID string) (*contract.Object, error)
}

// Admissions tells the participant_admission mode of an object's rules.
type Admissions interface {
	Admission(ctx context.Context, objectID string) string
}

// Handler holds what the routes need.
type Handler struct {
	Store    *store.Store
	Outbox   *events.Outbox
	Identity Identity
	Rules    Admissions
	// IdempotencyTTL is how long an Idempotency-Key is remembered.
	IdempotencyTTL time.Duration
	Log            *slog.Logger
}

// Register mounts the routes on api (a group that already requires an internal token).
func Register(api *gin.RouterGroup, h *Handler) {
	api.POST("/api/messages", h.sendMessage)
	api.GET("/api/objects/:hash/mailbox", h.mailbox)
	api.GET("/api/threads/:threadId", h.getThread)
	api.PATCH("/api/threads/:threadId", h.updateThread)
	api.POST("/api/objects/:hash/sender-blocks", h.blockSender)
	api.DELETE("/api/objects/:hash/sender-blocks/:blocked_hash", h.unblockSender)

	in := api.Group("/internal/v1")
	in.GET("/objects/:id/blocked", h.blockedSenders)
	in.GET("/threads/:id", h.internalThread)
}

// resolve returns the object a hash names; what names the object in a 404.
func (h *Handler) resolve(ctx context.Context, hash, what string) (*identity.Object, error) {
	obj, err := h.Identity.Resolve(ctx, hash)
	switch {
	case errors.Is(err, identity.ErrNotFound):
		return nil, httpx.NotFound(what)
	case err != nil:
		return nil, httpx.Unavailable(err)
	}
	return obj, nil
}

// hashes returns the current hash of each object. Objects are normally known from the send or
// block that first named them; any other is asked of identity-svc and remembered.
func (h *Handler) hashes(ctx context.Context, objectIDs []string) (map[string]string, error) {
	known, err := h.Store.Hashes(ctx, objectIDs)
	if err != nil {
		return nil, err
	}
	for _, id := range objectIDs {
		if _, ok := known[id]; ok {
			continue
		}
		obj, err := h.Identity.Object(ctx, id)
		if errors.Is(err, identity.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, httpx.Unavailable(err)
		}
		known[id] = obj.Hash
		if err := h.Store.RememberHash(ctx, id, obj.Hash); err != nil {
			h.Log.Warn("remembering a hash failed", "object_id", id, "error", err)
		}
	}
	return known, nil
}

// mailboxCaller returns the principal of a thread or mailbox route; sub-keys need the mailbox
// scope. The gateway checks the same; no route relies on one layer alone.
func mailboxCaller(c *gin.Context) (*authn.Principal, bool) {
	p := authn.PrincipalFrom(c)
	if p == nil {
		httpx.Abort(c, httpx.Unauthorized("an API key is required"))
		return nil, false
	}
	if !p.HasScope(authn.ScopeMailbox) {
		httpx.Abort(c, httpx.Forbidden(httpx.CodeInsufficientScope, "this key lacks the mailbox scope"))
		return nil, false
	}
	return p, true
}

// storeError maps a store error to the public answer.
func storeError(err error, what string) error {
	if errors.Is(err, store.ErrNotFound) {
		return httpx.NotFound(what)
	}
	return err
}
