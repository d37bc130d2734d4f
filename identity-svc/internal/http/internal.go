package http

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
)

// resolve answers the gateway's and services' hash lookups.
func (h *Handler) resolve(c *gin.Context) {
	obj, err := h.Store.ObjectByHash(c.Request.Context(), c.Param("hash"))
	if err != nil {
		httpx.Abort(c, storeError(err, "object"))
		return
	}
	c.JSON(http.StatusOK, identity.Object{ObjectID: obj.ID, Hash: obj.Hash, Visibility: obj.Visibility, MailboxStatus: obj.MailboxStatus})
}

type verifyRequest struct {
	Digest string `json:"digest"`
}

// verifyKey answers the gateway's lookups of key digests on a cache miss.
func (h *Handler) verifyKey(c *gin.Context) {
	var req verifyRequest
	if err := httpx.Decode(c, &req); err != nil {
		httpx.Abort(c, err)
		return
	}
	ctx := c.Request.Context()
	k, err := h.Store.KeyByDigest(ctx, req.Digest)
	if err != nil {
		httpx.Abort(c, storeError(err, "key"))
		return
	}
	obj, err := h.Store.Object(ctx, k.ObjectID)
	if err != nil {
		httpx.Abort(c, storeError(err, "key"))
		return
	}
	h.Store.TouchKey(ctx, req.Digest, clock.Now())
	c.JSON(http.StatusOK, authn.Principal{ObjectID: obj.ID, Hash: obj.Hash, KeyID: k.KeyID, Owner: k.Owner, Scopes: k.Scopes})
}

func (h *Handler) internalObject(c *gin.Context) {
	obj, err := h.Store.Object(c.Request.Context(), c.Param("id"))
	if err != nil {
		httpx.Abort(c, storeError(err, "object"))
		return
	}
	c.JSON(http.StatusOK, internalView(obj))
}

// updateProfile records the version and title of a context write (read-your-writes).
func (h *Handler) updateProfile(c *gin.Context) {
	var req contract.ProfileUpdate
	if err := httpx.Decode(c, &req); err != nil {
		httpx.Abort(c, err)
		return
	}
	at, err := time.Parse(clock.Layout, req.UpdatedAt)
	if err != nil {
		at = clock.Now()
	}
	if err := h.Store.UpdateProfile(c.Request.Context(), c.Param("id"), req.Version, req.Title, at); err != nil {
		httpx.Abort(c, err)
		return
	}
	h.ETags.Changed(c.Request.Context(), c.Param("id"))
	c.JSON(http.StatusOK, gin.H{"ok": true})
}
