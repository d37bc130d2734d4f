package http

import (
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
)

type blockRequest struct {
	BlockedHash *string `json:"blocked_hash"`
}

// blockSender makes the owner's box refuse messages from a sender. Blocking a blocked sender
// again changes nothing and answers the same.
func (h *Handler) blockSender(c *gin.Context) {
	p, t, ok := authn.RequireOwner(c)
	if !ok {
		return
	}
	var req blockRequest
	if err := httpx.Decode(c, &req); err != nil {
		httpx.Abort(c, err)
		return
	}
	if req.BlockedHash == nil {
		httpx.Abort(c, httpx.MissingField("blocked_hash"))
		return
	}
	if !apikey.ValidHash(*req.BlockedHash) {
		httpx.Abort(c, httpx.BadRequest(httpx.CodeInvalidRequest, "blocked_hash is not an object hash"))
		return
	}
	ctx := c.Request.Context()
	sender, err := h.resolve(ctx, *req.BlockedHash, "object")
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	if sender.ObjectID == p.ObjectID {
		httpx.Abort(c, httpx.BadRequest(httpx.CodeInvalidRequest, "an object cannot block itself"))
		return
	}
	if err := h.Store.RememberHash(ctx, sender.ObjectID, sender.Hash); err != nil {
		httpx.Abort(c, err)
		return
	}
	now := clock.Now()
	ev := events.MustNew(events.TopicMailbox, events.SenderBlocked, p.ObjectID, t.Hash, httpx.RequestID(c),
		contract.SenderBlockData{SenderObjectID: sender.ObjectID, SenderHash: sender.Hash, At: clock.Format(now)})
	b := &store.SenderBlock{ID: store.BlockID(p.ObjectID, sender.ObjectID), RecipientID: p.ObjectID, SenderID: sender.ObjectID,
		CreatedAt: now, Events: events.IDs(ev)}
	err = h.Outbox.Stage(ctx, store.SenderBlocks, b.ID, ev)
	created := false
	if err == nil {
		created, err = h.Store.InsertBlock(ctx, b)
	}
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	if created {
		h.Outbox.Confirm(ev)
	}
	c.JSON(http.StatusCreated, gin.H{"ok": true, "blocked_hash": sender.Hash})
}

// unblockSender lifts a block.
func (h *Handler) unblockSender(c *gin.Context) {
	p, t, ok := authn.RequireOwner(c)
	if !ok {
		return
	}
	hash := c.Param("blocked_hash")
	if !apikey.ValidHash(hash) {
		httpx.Abort(c, httpx.NotFound("sender block"))
		return
	}
	ctx := c.Request.Context()
	sender, err := h.resolve(ctx, hash, "sender block")
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	now := clock.Now()
	ev := events.MustNew(events.TopicMailbox, events.SenderUnblocked, p.ObjectID, t.Hash, httpx.RequestID(c),
		contract.SenderBlockData{SenderObjectID: sender.ObjectID, SenderHash: sender.Hash, At: clock.Format(now)})
	u := &store.Unblock{ID: apikey.NewID("unb"), RecipientID: p.ObjectID, SenderID: sender.ObjectID, UnblockedAt: now,
		Events: events.IDs(ev)}
	err = h.Outbox.Stage(ctx, store.Unblocks, u.ID, ev)
	if err == nil {
		err = h.Store.DeleteBlock(ctx, u, h.Outbox)
	}
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			err = httpx.NotFound("sender block")
		}
		httpx.Abort(c, err)
		return
	}
	h.Outbox.Confirm(ev)
	c.JSON(http.StatusOK, gin.H{"ok": true, "unblocked": sender.Hash})
}
