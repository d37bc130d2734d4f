// Package api serves graph-svc's routes: the graph of a thread, decisions, private guidance,
// thread sources and ingest. A handler decodes, calls a use case of package graph and responds.
package api

import (
	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/httpx"
)

// Handler holds the use cases the routes call.
type Handler struct {
	Graph *graph.Service
}

// Register mounts the routes on api (a group that already requires an internal token).
func Register(api *gin.RouterGroup, h *Handler) {
	t := api.Group("/api/threads/:threadId")
	t.GET("/graph", httpx.Handle(h.graph))
	t.POST("/nodes", httpx.Handle(h.addNode))
	t.POST("/edges", httpx.Handle(h.addEdge))
	t.POST("/decision", httpx.Handle(h.decide))
	t.PUT("/private-guidance", httpx.Handle(h.putGuidance))
	t.GET("/private-guidance", httpx.Handle(h.getGuidance))
	t.GET("/sources", httpx.Handle(h.sources))
	t.POST("/sources/:sourceId/pull", httpx.Handle(h.pullSource))

	api.POST("/api/ingest", httpx.Handle(h.ingest))
	api.POST("/api/ingest/self", httpx.Handle(h.ingestSelf))
	api.GET("/api/ingest", httpx.Handle(h.overview))
	api.GET("/api/objects/:hash/memory/search", httpx.Handle(h.searchMemory))
}

// caller returns who calls a thread or ingest route. Every one of them needs the mailbox scope
// besides read (GET) or write; the gateway checks the same, and no route relies on one layer
// alone.
func caller(c *gin.Context) (*authn.Principal, error) {
	p := authn.PrincipalFrom(c)
	if p == nil {
		return nil, httpx.Unauthorized("an API key is required")
	}
	scope := authn.ScopeWrite
	if c.Request.Method == "GET" {
		scope = authn.ScopeRead
	}
	for _, s := range []string{scope, authn.ScopeMailbox} {
		if !p.HasScope(s) {
			return nil, httpx.Forbidden(httpx.CodeInsufficientScope, "this key lacks the "+s+" scope")
		}
	}
	return p, nil
}

// request returns who calls a write route and its decoded body.
func request[T any](c *gin.Context) (*authn.Principal, *T, error) {
	who, err := caller(c)
	if err != nil {
		return nil, nil, err
	}
	var req T
	if err := httpx.Decode(c, &req); err != nil {
		return nil, nil, err
	}
	return who, &req, nil
}

// reply answers v with status, or the use case's error.
func reply(c *gin.Context, status int, v any, err error) error {
	if err != nil {
		return err
	}
	c.JSON(status, v)
	return nil
}
