package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/mailbox-svc/internal/mailbox"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/httpx"
)

type blockRequest struct {
	BlockedHash *string `json:"blocked_hash" required:"true"`
}

func (h *Handler) blockSender(c *gin.Context) error {
	p, t, err := authn.Owner(c)
	if err != nil {
		return err
	}
	var req blockRequest
	if err := httpx.Decode(c, &req); err != nil {
		return err
	}
	hash, err := h.Blocks.Block(c.Request.Context(), httpx.RequestID(c),
		mailbox.Owner{ObjectID: p.ObjectID, Hash: t.Hash}, *req.BlockedHash)
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, gin.H{"ok": true, "blocked_hash": hash})
	return nil
}

func (h *Handler) unblockSender(c *gin.Context) error {
	p, t, err := authn.Owner(c)
	if err != nil {
		return err
	}
	hash, err := h.Blocks.Unblock(c.Request.Context(), httpx.RequestID(c),
		mailbox.Owner{ObjectID: p.ObjectID, Hash: t.Hash}, c.Param("blocked_hash"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"ok": true, "unblocked": hash})
	return nil
}
