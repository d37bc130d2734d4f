package http

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
)

type associationRequest struct {
	PeerHash *string `json:"peer_hash"`
	Role     *string `json:"role"`
	Label    *string `json:"label"`
}

type associationResponse struct {
	ID        string `json:"id"`
	PeerHash  string `json:"peer_hash"`
	Role      string `json:"role"`
	Label     string `json:"label"`
	CreatedAt string `json:"created_at"`
}

func associationView(a *store.Association) associationResponse {
	return associationResponse{ID: a.ID, PeerHash: a.PeerHash, Role: a.Role, Label: a.Label, CreatedAt: clock.Format(a.CreatedAt)}
}

func (h *Handler) createAssociation(c *gin.Context) {
	p, t, ok := authn.RequireOwner(c)
	if !ok {
		return
	}
	var req associationRequest
	if err := httpx.Decode(c, &req); err != nil {
		httpx.Abort(c, err)
		return
	}
	if req.PeerHash == nil || *req.PeerHash == "" {
		httpx.Abort(c, httpx.MissingField("peer_hash"))
		return
	}
	role, label := deref(req.Role), deref(req.Label)
	if len(role) > MaxLabel || len(label) > MaxLabel {
		httpx.Abort(c, httpx.BadRequest(httpx.CodeInvalidRequest, "role and label are at most %d characters", MaxLabel))
		return
	}
	if !apikey.ValidHash(*req.PeerHash) {
		httpx.Abort(c, httpx.BadRequest(httpx.CodeInvalidRequest, "peer_hash is not an object hash"))
		return
	}
	ctx := c.Request.Context()
	peer, err := h.Store.ObjectByHash(ctx, *req.PeerHash)
	if err != nil {
		httpx.Abort(c, storeError(err, "peer object"))
		return
	}
	a := &store.Association{ID: apikey.NewID("asc"), ObjectID: p.ObjectID, PeerHash: peer.Hash, Role: role, Label: label, CreatedAt: clock.Now()}
	ev := events.MustNew(events.TopicIdentity, events.AssociationCreated, p.ObjectID, t.Hash, httpx.RequestID(c), associationView(a))
	a.Events = events.IDs(ev)
	if err := h.Outbox.Stage(ctx, store.Associations, a.ID, ev); err != nil {
		httpx.Abort(c, err)
		return
	}
	if err := h.Store.InsertAssociation(ctx, a); err != nil {
		httpx.Abort(c, err)
		return
	}
	h.Outbox.Confirm(ev)
	c.JSON(http.StatusCreated, associationView(a))
}

func (h *Handler) listAssociations(c *gin.Context) {
	p, _, ok := authn.RequireOwner(c)
	if !ok {
		return
	}
	list, err := h.Store.Associations(c.Request.Context(), p.ObjectID)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	out := make([]associationResponse, len(list))
	for i := range list {
		out[i] = associationView(&list[i])
	}
	c.JSON(http.StatusOK, gin.H{"associations": out})
}

func (h *Handler) deleteAssociation(c *gin.Context) {
	p, _, ok := authn.RequireOwner(c)
	if !ok {
		return
	}
	id := c.Param("id")
	if err := h.Store.DeleteAssociation(c.Request.Context(), p.ObjectID, id); err != nil {
		httpx.Abort(c, storeError(err, "association"))
		return
	}
	c.JSON(http.StatusOK, gin.H{"ok": true, "deleted": id})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
