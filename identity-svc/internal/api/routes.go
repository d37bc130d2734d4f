// Package api serves identity-svc's routes: objects, keys, associations, the directory, custom
// hashes, and the internal resolution and key-verification API of the other services. A handler
// decodes, calls a use case of package object and responds.
package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/identity-svc/internal/object"
	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/httpx"
)

type handlers struct{ objects *object.Service }

// Register mounts the routes on api (a group that already requires an internal token); etags
// answers the public object reads' revalidations, and are the validators objects replaces.
func Register(api *gin.RouterGroup, objects *object.Service, etags *httpx.ETags) {
	h := &handlers{objects: objects}
	api.POST("/api/objects", httpx.Handle(h.createObject))
	api.GET("/api/objects/:hash", etags.Cacheable(authn.PublicTargetID), httpx.Handle(h.getObject))
	api.POST("/api/objects/:hash/rotate-key", httpx.Handle(h.rotateKey))
	api.POST("/api/objects/claim-custom-hash", httpx.Handle(h.claimCustomHash))
	api.GET("/api/directory", httpx.Handle(h.directory))
	api.GET("/.well-known/webfinger", httpx.Handle(h.webfinger))
	api.GET("/.well-known/http-message-signatures-directory", httpx.Handle(h.serviceKeyDirectory))
	api.GET("/.well-known/did.json", httpx.Handle(h.serviceDID))
	api.GET("/api/whoami", httpx.Handle(h.whoami))
	api.GET("/api/objects/:hash/jwks.json", etags.Cacheable(authn.PublicTargetID), httpx.Handle(h.jwks))
	api.POST("/api/objects/:hash/signing-keys", httpx.Handle(h.registerSigningKey))
	api.GET("/api/objects/:hash/http-message-signatures-directory", httpx.Handle(h.keyDirectory))
	api.GET("/api/objects/:hash/did.json", etags.Cacheable(authn.PublicTargetID), httpx.Handle(h.did))

	api.POST("/api/objects/:hash/keys", httpx.Handle(h.createKey))
	api.GET("/api/objects/:hash/keys", httpx.Handle(h.listKeys))
	api.DELETE("/api/objects/:hash/keys/:keyId", httpx.Handle(h.revokeKey))

	api.GET("/api/objects/:hash/svc-associations", httpx.Handle(h.listAssociations))
	api.POST("/api/objects/:hash/svc-associations", httpx.Handle(h.createAssociation))
	api.DELETE("/api/objects/:hash/svc-associations/:id", httpx.Handle(h.deleteAssociation))

	in := api.Group("/internal/v1")
	in.GET("/resolve/:hash", httpx.Handle(h.resolve))
	in.POST("/keys/verify", httpx.Handle(h.verifyKey))
	in.GET("/objects/:id", httpx.Handle(h.internalObject))
	in.POST("/objects/:id/profile", httpx.Handle(h.updateProfile))
	in.GET("/objects/:id/signing-keys", httpx.Handle(h.internalSigningKeys))
	in.POST("/objects/:id/sign", httpx.Handle(h.internalSign))
	in.POST("/objects/:id/grant-keys", httpx.Handle(h.createGrantKey))
	in.DELETE("/objects/:id/grant-keys/:keyId", httpx.Handle(h.revokeGrantKey))
}

// owner admits a principal that owns the route's object; with ownerKey, only its owner key (key
// management is never delegated to a sub-key).
func owner(c *gin.Context, ownerKey bool) (object.Caller, error) {
	p, t, err := authn.Owner(c)
	if err != nil {
		// Another object's key: it learns of the object only as contract.Visible says.
		if p, t := authn.PrincipalFrom(c), authn.TargetFrom(c); p != nil && t != nil && !contract.Visible(t.Visibility, t.ObjectID, p.Viewer()) {
			return object.Caller{}, httpx.NotFound("object")
		}
		return object.Caller{}, err
	}
	if ownerKey && !p.Owner {
		return object.Caller{}, ownerKeyNeeded()
	}
	return object.Caller{ObjectID: p.ObjectID, KeyID: p.KeyID, Hash: t.Hash}, nil
}

func ownerKeyNeeded() error {
	return httpx.Forbidden(httpx.CodeInsufficientScope, "this route needs the owner key, not a sub-key")
}

// ownerPage answers a page of a list of the route's object (admitted as owner admits): list's
// items below the cursor, each as view shows it, under name, with next_cursor. scope names the
// list's cursors.
func ownerPage[T, V any](c *gin.Context, ownerKey bool, scope func(objectID string) string, name string,
	list func(ctx context.Context, objectID string, p store.Page) ([]T, string, error), view func(*T) V) error {
	caller, err := owner(c, ownerKey)
	if err != nil {
		return err
	}
	sc := scope(caller.ObjectID)
	limit, before, err := httpx.PageKey(c, sc)
	if err != nil {
		return err
	}
	items, next, err := list(c.Request.Context(), caller.ObjectID, store.Page{Before: before, Limit: limit})
	if err != nil {
		return err
	}
	out := make([]V, len(items))
	for i := range items {
		out[i] = view(&items[i])
	}
	c.JSON(http.StatusOK, gin.H{name: out, "next_cursor": nextCursor(sc, next)})
	return nil
}

// nextCursor is a list's next_cursor: the cursor of the list scope that pages on from the id
// next, nil on the last page.
func nextCursor(scope, next string) *string {
	if next == "" {
		return nil
	}
	c := httpx.KeyCursor(scope, next)
	return &c
}

// answer responds 200 with v as JSON of the media type contentType ("": application/json), or
// returns err.
func answer(c *gin.Context, contentType string, v any, err error) error {
	if err != nil {
		return err
	}
	if contentType != "" {
		c.Header("Content-Type", contentType)
	}
	c.JSON(http.StatusOK, v)
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
