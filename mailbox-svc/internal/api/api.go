// Package api serves mailbox-svc's routes: public message ingress, mailboxes, threads and their
// read state, sender blocks, and the internal API other services read threads from. A handler
// decodes, calls a use case of package mailbox and responds.
package api

import (
	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/mailbox-svc/internal/mailbox"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/httpx"
)

// Handler holds the use cases the routes call.
type Handler struct {
	Sender  *mailbox.Sender
	Threads *mailbox.Threads
	Blocks  *mailbox.Blocks
	Tasks   *mailbox.Tasks
}

// Register mounts the routes on api (a group that already requires an internal token).
func Register(api *gin.RouterGroup, h *Handler) {
	api.POST("/api/messages", httpx.Handle(h.sendMessage))
	api.GET("/api/objects/:hash/mailbox", httpx.Handle(h.mailbox))
	api.GET("/api/threads/:threadId", httpx.Handle(h.getThread))
	api.PATCH("/api/threads/:threadId", httpx.Handle(h.updateThread))
	api.POST("/api/objects/:hash/sender-blocks", httpx.Handle(h.blockSender))
	api.DELETE("/api/objects/:hash/sender-blocks/:blocked_hash", httpx.Handle(h.unblockSender))
	// A2A's method paths hold a literal colon, which Gin takes escaped.
	api.POST(`/api/objects/:hash/a2a/message\:send`, httpx.Handle(h.a2aSend))
	api.POST(`/a2a/message\:send`, httpx.Handle(h.a2aSendAny))
	api.GET("/api/objects/:hash/a2a/tasks/:id", httpx.Handle(h.a2aTask))

	in := api.Group("/internal/v1")
	in.GET("/objects/:id/blocks/:sender", httpx.Handle(h.internalBlocked))
	in.GET("/threads/:id", httpx.Handle(h.internalThread))
}

// mailboxCaller returns the principal of a thread or mailbox route; sub-keys need the mailbox
// scope. The gateway checks the same; no route relies on one layer alone.
func mailboxCaller(c *gin.Context) (*authn.Principal, error) {
	p := authn.PrincipalFrom(c)
	if p == nil {
		return nil, httpx.Unauthorized("an API key is required")
	}
	if !p.HasScope(authn.ScopeMailbox) {
		return nil, httpx.Forbidden(httpx.CodeInsufficientScope, "this key lacks the mailbox scope")
	}
	return p, nil
}
