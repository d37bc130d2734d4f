// Package api serves context-svc's routes: the public profile (llm.txt), structured context,
// versions, rules, sources, context links, repository sync, the context coach, decision memory,
// the agent card, and the internal reads of mailbox-svc (rules) and feed-svc (the composed profile).
// A handler decodes, calls a use case of package profile and responds.
package api

import (
	"context"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/context-svc/internal/profile"
	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/httpsig"
	"github.com/svcdev/svc/pkg/httpx"
)

// Handler holds what the routes need.
type Handler struct {
	Profiles *profile.Service
	// ETags validates the public reads (llm.txt, agent card, rules, coach); every write replaces it.
	ETags *httpx.ETags
	// BaseURL is the public address of the API, for links and the messaging section.
	BaseURL string
	// ServiceKey signs svc's own card; it is published at httpsig.DirectoryPath.
	ServiceKey *httpsig.Signer
}

// Register mounts the routes on api (a group that already requires an internal token).
func Register(api *gin.RouterGroup, h *Handler) {
	o := api.Group("/api/objects/:hash")
	cacheable := h.ETags.Cacheable(authn.PublicTargetID)
	o.GET("/llm.txt", cacheable, httpx.Handle(h.getLLMTxt))
	o.PUT("/llm.txt", httpx.Handle(h.putLLMTxt))
	o.GET("/context", httpx.Handle(h.getContext))
	o.PUT("/context", httpx.Handle(h.putContext))
	o.GET("/versions", httpx.Handle(h.versions))
	o.GET("/rules", h.ETags.Cacheable(publicRules), httpx.Handle(h.getRules))
	o.PUT("/rules", httpx.Handle(h.putRules))
	o.GET("/sources", httpx.Handle(h.listSources))
	o.POST("/sources", httpx.Handle(h.createSource))
	o.DELETE("/sources/:sourceId", httpx.Handle(h.deleteSource))
	o.GET("/context-links", httpx.Handle(h.listLinks))
	o.POST("/context-links", httpx.Handle(h.createLink))
	o.PUT("/sync", httpx.Handle(h.configureSync))
	o.POST("/sync", httpx.Handle(h.pullSync))
	o.GET("/context-coach.txt", cacheable, httpx.Handle(h.coach))
	o.GET("/decision-memory", httpx.Handle(h.getMemory))
	o.PUT("/decision-memory", httpx.Handle(h.putMemory))
	o.POST("/decision-memory", httpx.Handle(h.rebuildMemory))
	o.GET("/agent-card.json", cacheable, httpx.Handle(h.agentCard))

	api.GET("/.well-known/agent-card.json", httpx.Handle(h.serviceCard))
	api.GET("/api/context-links/:linkId", httpx.Handle(h.getLink))
	api.GET("/context/:linkId", httpx.Handle(h.linkPage))

	api.GET("/internal/v1/objects/:id/profile", httpx.Handle(h.internalProfile))
	api.GET("/internal/v1/objects/:id/admission", httpx.Handle(h.internalAdmission))
}

// Content types of the text routes.
const (
	textPlain    = "text/plain; charset=utf-8"
	textMarkdown = "text/markdown; charset=utf-8"
)

// publicRules is the cache key of a rules read: the owner's blocked list lives in mailbox-svc,
// whose writes do not replace context-svc's validator, so that read is never cached.
func publicRules(c *gin.Context) string {
	if c.Query("show_blocked_list") != "" {
		return ""
	}
	return authn.PublicTargetID(c)
}

// owner returns the use-case target of an owner route, or the error that refuses the caller.
func owner(c *gin.Context) (profile.Target, error) {
	_, t, err := authn.Owner(c)
	if err != nil {
		return profile.Target{}, err
	}
	return profile.Target{ObjectID: t.ObjectID, Hash: t.Hash, RequestID: httpx.RequestID(c)}, nil
}

// callerOwns reports whether a public route's caller presented a key of the object that may
// read it (the owner key, or a sub-key with the read scope).
func callerOwns(c *gin.Context, t *authn.Target) bool {
	return t.ObjectID != "" && authn.PrincipalFrom(c).Viewer() == t.ObjectID
}

// readable returns the target of a public profile read, refusing an object the caller may not
// learn of (contract.Visible) with a 404 that does not reveal it.
func readable(c *gin.Context) (*authn.Target, error) {
	t := authn.TargetFrom(c)
	if t == nil || !contract.Visible(t.Visibility, t.ObjectID, authn.PrincipalFrom(c).Viewer()) {
		return nil, httpx.NotFound("object")
	}
	if t.Visibility == contract.Private {
		c.Header("Cache-Control", "private, no-store")
	}
	return t, nil
}

// decodeEmpty accepts a request without a body, or with an empty JSON object, for routes that
// take none.
func decodeEmpty(c *gin.Context) error {
	if c.Request.ContentLength == 0 {
		return nil
	}
	return httpx.Decode(c, &struct{}{})
}

// ownerWrite runs an owner's write: decode reads the request, write applies it.
func ownerWrite[T, R any](c *gin.Context, decode func(*gin.Context) (T, error),
	write func(context.Context, profile.Target, T) (R, error)) (R, error) {
	t, err := owner(c)
	if err != nil {
		return *new(R), err
	}
	in, err := decode(c)
	if err != nil {
		return *new(R), err
	}
	return write(c.Request.Context(), t, in)
}

// decodeJSON reads a JSON request body into a new T.
func decodeJSON[T any](c *gin.Context) (*T, error) {
	req := new(T)
	return req, httpx.Decode(c, req)
}

// readableProfile returns the target and current profile of a public profile read.
func (h *Handler) readableProfile(c *gin.Context) (*authn.Target, *store.Profile, error) {
	t, err := readable(c)
	if err != nil {
		return nil, nil, err
	}
	p, err := h.Profiles.Profile(c.Request.Context(), t.ObjectID)
	if err != nil {
		return nil, nil, err
	}
	return t, p, nil
}

type versionResponse struct {
	OK      bool `json:"ok"`
	Version int  `json:"version"`
}
