// Package api serves claims-svc's routes: claims and their verification for owners. A handler decodes, calls a use
// case of package claims and responds.
package api

import (
	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/claims-svc/internal/claims"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/httpx"
)

// Handler holds the use cases the routes call.
type Handler struct {
	Claims *claims.Service
}

// Register mounts the routes on api (a group that already requires an internal token).
func Register(api *gin.RouterGroup, h *Handler) {
	api.POST("/api/claims", httpx.Handle(h.create))
	api.GET("/api/claims/:claimId", httpx.Handle(h.get))
	api.POST("/api/claims/:claimId/verify", httpx.Handle(h.verify))
	api.GET("/api/objects/:hash/claims", httpx.Handle(h.list))
}

// caller returns the principal of a claim route; sub-keys need scope (read or write).
func caller(c *gin.Context, scope string) (*authn.Principal, error) {
	p := authn.PrincipalFrom(c)
	if p == nil {
		return nil, httpx.Unauthorized("an API key is required")
	}
	if !p.HasScope(scope) {
		return nil, httpx.Forbidden(httpx.CodeInsufficientScope, "this key lacks the "+scope+" scope")
	}
	return p, nil
}
