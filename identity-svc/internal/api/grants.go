package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/identity-svc/internal/object"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/httpx"
)

// createGrantKey makes the sub-key of an OAuth grant the gateway's consent step approved (the
// gateway checked the key the owner proved ownership with). It is the sub-key use case of POST
// /api/objects/{hash}/keys, so that a grant is listed, limited and revoked as any sub-key; only
// the key's digest is answered: the key itself is never handed to anyone, the gateway's access
// tokens name the digest instead.
func (h *handlers) createGrantKey(c *gin.Context) error {
	var req contract.GrantKeyRequest
	if err := httpx.Decode(c, &req); err != nil {
		return err
	}
	ctx := c.Request.Context()
	o, err := h.objects.ByID(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	caller := object.Caller{ObjectID: o.ID, KeyID: req.ApprovedBy, Hash: o.Hash}
	k, _, err := h.objects.CreateKey(ctx, httpx.RequestID(c), caller, object.NewKey{Label: req.Label, Scopes: req.Scopes})
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, contract.GrantKey{KeyID: k.KeyID, Digest: k.Digest, Scopes: k.Scopes})
	return nil
}

// revokeGrantKey revokes the sub-key of an OAuth grant whose refresh token was used twice (a
// sign that it was stolen), by the sub-key use case of DELETE /api/objects/{hash}/keys/{keyId}:
// the grant's tokens are refused from the answer on, on every gateway replica.
func (h *handlers) revokeGrantKey(c *gin.Context) error {
	ctx := c.Request.Context()
	o, err := h.objects.ByID(ctx, c.Param("id"))
	if err != nil {
		return err
	}
	keyID := c.Param("keyId")
	if err := h.objects.RevokeKey(ctx, httpx.RequestID(c), object.Caller{ObjectID: o.ID, Hash: o.Hash}, keyID); err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"ok": true, "revoked": keyID})
	return nil
}
