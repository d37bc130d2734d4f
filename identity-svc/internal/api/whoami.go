package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/httpx"
)

type whoamiResponse struct {
	Hash          string   `json:"hash"`
	KeyID         string   `json:"key_id"`
	OwnerKey      bool     `json:"owner_key"`
	Scopes        []string `json:"scopes"`
	MailboxStatus string   `json:"mailbox_status"`
	Visibility    string   `json:"visibility"`
	Version       int      `json:"version"`
}

// whoami answers who the presented key is. The object is read by id rather than taken from the
// principal, whose hash may be a cached one from before a custom hash replaced it.
func (h *handlers) whoami(c *gin.Context) error {
	p := authn.PrincipalFrom(c)
	if p == nil {
		return httpx.Unauthorized("an API key is required")
	}
	o, err := h.objects.ByID(c.Request.Context(), p.ObjectID)
	if err != nil {
		return err
	}
	scopes := p.Scopes
	if p.Owner {
		scopes = []string{authn.ScopeRead, authn.ScopeWrite, authn.ScopeMailbox}
	}
	if scopes == nil {
		scopes = []string{}
	}
	c.JSON(http.StatusOK, whoamiResponse{Hash: o.Hash, KeyID: p.KeyID, OwnerKey: p.Owner, Scopes: scopes,
		MailboxStatus: o.MailboxStatus, Visibility: string(o.Visibility), Version: o.Version})
	return nil
}
