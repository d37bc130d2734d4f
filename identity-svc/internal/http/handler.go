// Package http serves identity-svc's routes: objects, keys, associations, the directory, custom
// hashes, and the internal resolution and key-verification API of the other services.
package http

import (
	"context"
	"errors"
	"log/slog"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/identity-svc/internal/payment"
	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
)

// Handler holds what the routes need.
type Handler struct {
	Store    *store.Store
	Outbox   *events.Outbox
	Redis    *redis.Client
	Payments payment.Verifier
	Log      *slog.Logger
	// ETags validates public object reads; writes that change what they show replace it.
	ETags *httpx.ETags
}

// Register mounts the routes on api (a group that already requires an internal token).
func Register(api *gin.RouterGroup, h *Handler) {
	api.POST("/api/objects", h.createObject)
	api.GET("/api/objects/:hash", h.ETags.Cacheable(authn.PublicTargetID), h.getObject)
	api.POST("/api/objects/:hash/rotate-key", h.rotateKey)
	api.POST("/api/objects/claim-custom-hash", h.claimCustomHash)
	api.GET("/api/directory", h.directory)

	api.POST("/api/objects/:hash/keys", h.createKey)
	api.GET("/api/objects/:hash/keys", h.listKeys)
	api.DELETE("/api/objects/:hash/keys/:keyId", h.revokeKey)

	api.GET("/api/objects/:hash/svc-associations", h.listAssociations)
	api.POST("/api/objects/:hash/svc-associations", h.createAssociation)
	api.DELETE("/api/objects/:hash/svc-associations/:id", h.deleteAssociation)

	in := api.Group("/internal/v1")
	in.GET("/resolve/:hash", h.resolve)
	in.POST("/keys/verify", h.verifyKey)
	in.GET("/objects/:id", h.internalObject)
	in.POST("/objects/:id/profile", h.updateProfile)
}

// forgetHashes drops cached resolutions of every hash of an object, so that no gateway or
// service keeps routing with a stale current hash.
func (h *Handler) forgetHashes(ctx context.Context, hashes ...string) {
	keys := make([]string, len(hashes))
	for i, hash := range hashes {
		keys[i] = identity.HashCacheKey(hash)
	}
	if err := h.Redis.Del(ctx, keys...).Err(); err != nil {
		h.Log.Warn("hash cache invalidation failed", "error", err)
	}
}

// storeError maps a store error to the public answer.
func storeError(err error, what string) error {
	if errors.Is(err, store.ErrNotFound) {
		return httpx.NotFound(what)
	}
	return err
}
