package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/claims-svc/internal/claims"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/httpx"
)

type createRequest struct {
	ObjectHash    *string `json:"object_hash" required:"true"`
	ProofType     *string `json:"proof_type" required:"true"`
	ClaimedTarget *string `json:"claimed_target" required:"true"`
}

func (h *Handler) create(c *gin.Context) error {
	p, err := caller(c, authn.ScopeWrite)
	if err != nil {
		return err
	}
	var req createRequest
	if err := httpx.Decode(c, &req); err != nil {
		return err
	}
	v, err := h.Claims.Create(c.Request.Context(), p.ObjectID, *req.ObjectHash, *req.ProofType, *req.ClaimedTarget)
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, v)
	return nil
}

func (h *Handler) get(c *gin.Context) error {
	p, err := caller(c, authn.ScopeRead)
	if err != nil {
		return err
	}
	v, err := h.Claims.Get(c.Request.Context(), p.ObjectID, c.Param("claimId"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, v)
	return nil
}

func (h *Handler) verify(c *gin.Context) error {
	p, err := caller(c, authn.ScopeWrite)
	if err != nil {
		return err
	}
	v, err := h.Claims.Verify(c.Request.Context(), httpx.RequestID(c), p.ObjectID, c.Param("claimId"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, v)
	return nil
}

func (h *Handler) list(c *gin.Context) error {
	p, t := authn.PrincipalFrom(c), authn.TargetFrom(c)
	if _, err := caller(c, authn.ScopeRead); err != nil {
		return err
	}
	if t == nil || t.ObjectID != p.ObjectID {
		return httpx.Forbidden(httpx.CodeForbidden, "this key does not own the object")
	}
	scope := "claims:" + t.ObjectID
	limit, after, err := httpx.PageKey(c, scope)
	if err != nil {
		return err
	}
	vs, next, err := h.Claims.List(c.Request.Context(), t.ObjectID, after, limit)
	if err != nil {
		return err
	}
	out := claimList{Claims: vs}
	if next != "" {
		cur := httpx.KeyCursor(scope, next)
		out.NextCursor = &cur
	}
	c.JSON(http.StatusOK, out)
	return nil
}

// claimList is a page of an object's claims.
type claimList struct {
	Claims     []claims.View `json:"claims"`
	NextCursor *string       `json:"next_cursor"`
}
