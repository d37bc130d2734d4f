package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/identity-svc/internal/object"
	"github.com/svcdev/svc/pkg/httpx"
)

type associationRequest struct {
	PeerHash *string `json:"peer_hash" required:"true"`
	Role     *string `json:"role"`
	Label    *string `json:"label"`
}

func (h *handlers) createAssociation(c *gin.Context) error {
	caller, err := owner(c, false)
	if err != nil {
		return err
	}
	var req associationRequest
	if err := httpx.Decode(c, &req); err != nil {
		return err
	}
	a, err := h.objects.Associate(c.Request.Context(), httpx.RequestID(c), caller, object.NewAssociation{
		PeerHash: *req.PeerHash, Role: deref(req.Role), Label: deref(req.Label),
	})
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, object.ViewOf(a))
	return nil
}

func (h *handlers) listAssociations(c *gin.Context) error {
	return ownerPage(c, false, object.AssociationsScope, "associations", h.objects.Associations, object.ViewOf)
}

func (h *handlers) deleteAssociation(c *gin.Context) error {
	caller, err := owner(c, false)
	if err != nil {
		return err
	}
	id := c.Param("id")
	if err := h.objects.Dissociate(c.Request.Context(), caller, id); err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"ok": true, "deleted": id})
	return nil
}
