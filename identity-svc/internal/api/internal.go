package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/identity-svc/internal/object"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
)

// resolve answers the gateway's and services' hash lookups.
func (h *handlers) resolve(c *gin.Context) error {
	o, err := h.objects.ByHash(c.Request.Context(), c.Param("hash"))
	if err != nil {
		return err
	}
	admission := o.Rules.Admission()
	c.JSON(http.StatusOK, identity.Object{ObjectID: o.ID, Hash: o.Hash, Visibility: o.Visibility, MailboxStatus: o.MailboxStatus,
		Admission: &admission})
	return nil
}

type verifyRequest struct {
	Digest string `json:"digest"`
}

// verifyKey answers the gateway's lookups of key digests on a cache miss.
func (h *handlers) verifyKey(c *gin.Context) error {
	var req verifyRequest
	if err := httpx.Decode(c, &req); err != nil {
		return err
	}
	p, err := h.objects.VerifyKey(c.Request.Context(), req.Digest)
	return answer(c, "", p, err)
}

func (h *handlers) internalObject(c *gin.Context) error {
	o, err := h.objects.ByID(c.Request.Context(), c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, object.InternalView(o))
	return nil
}

// updateProfile records the version and title of a context write (read-your-writes).
func (h *handlers) updateProfile(c *gin.Context) error {
	var req contract.ProfileUpdate
	if err := httpx.Decode(c, &req); err != nil {
		return err
	}
	if err := h.objects.ReportProfile(c.Request.Context(), c.Param("id"), req); err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"ok": true})
	return nil
}
