// Package api serves feed-svc's routes: feeds and their items, the network's feed, feed.txt,
// activity, stats, analytics and the public box page.
package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/feed-svc/internal/feed"
	"github.com/svcdev/svc/feed-svc/internal/network"
	"github.com/svcdev/svc/feed-svc/internal/page"
	"github.com/svcdev/svc/feed-svc/internal/stream"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/httpx"
)

// Handler holds what the routes need.
type Handler struct {
	Feeds   *feed.Feeds
	Network *network.Network
	Boxes   *page.Boxes
	Pages   *page.Renderer
	Streams *stream.Server
	// Tags are the feeds' validators, which every feed write replaces.
	Tags *httpx.FeedTags
	// PollInterval is the max-age of every feed read: how long a poller should wait.
	PollInterval time.Duration
}

// Register mounts the routes on api (a group that already requires an internal token).
func Register(api *gin.RouterGroup, h *Handler) {
	api.POST("/api/objects/:hash/feed", httpx.Handle(h.enableFeed))
	api.GET("/api/objects/:hash/analytics", httpx.Handle(h.analytics))
	api.POST("/api/feeds/:hash/items", httpx.Handle(h.publish))
	api.GET("/api/feeds/:hash/items", httpx.Handle(h.items))
	api.DELETE("/api/feeds/:hash/items/:item_id", httpx.Handle(h.hide))
	api.GET("/api/feed", httpx.Handle(h.global))
	api.GET("/feed.txt", httpx.Handle(h.globalText))
	api.GET("/api/activity", httpx.Handle(h.activity))
	api.GET("/api/stats", httpx.Handle(h.stats))
	api.GET("/api/objects/:hash/events", httpx.Handle(h.objectEvents))
	api.GET("/api/feed/stream", httpx.Handle(h.feedStream))
	api.GET("/", httpx.Handle(h.homePage))
	api.GET("/:box", httpx.Handle(h.boxPage))
}

// owner returns the route's target when the caller owns it. The gateway checks this already;
// the service checks again so that no route depends on one layer alone.
func owner(c *gin.Context) (*authn.Target, error) {
	p, t := authn.PrincipalFrom(c), authn.TargetFrom(c)
	if p == nil {
		return nil, httpx.Unauthorized("an API key is required")
	}
	if t == nil || t.ObjectID != p.ObjectID {
		return nil, httpx.Forbidden(httpx.CodeForbidden, "this key does not own the object")
	}
	return t, nil
}

// target returns the object named by the route's {hash}.
func target(c *gin.Context) (*authn.Target, error) {
	t := authn.TargetFrom(c)
	if t == nil {
		return nil, httpx.NotFound("object")
	}
	return t, nil
}

// polled answers a feed read: with the feed's validator (httpx.FeedTags) and a max-age that
// tells the poller when to come back, and with 304 and no body when the poller already holds this
// version. The validator is taken before anything is read, from Redis: a revalidation costs no
// store read, and content is never labelled newer than it is. Without Redis the read is answered
// in full without a validator.
func (h *Handler) polled(c *gin.Context, feed, contentType string, private bool, render func() ([]byte, error)) error {
	etag, err := h.Tags.ETag(c.Request.Context(), feed, c.Request, true)
	if err != nil {
		etag = ""
	}
	scope := "public"
	if private {
		scope = "private"
	}
	cacheControl := scope + ", max-age=" + strconv.Itoa(int(h.PollInterval/time.Second))
	if etag != "" && !httpx.NoneMatch(c.GetHeader("If-None-Match"), etag) {
		c.Header("ETag", etag)
		c.Header("Cache-Control", cacheControl)
		c.Status(http.StatusNotModified)
		return nil
	}
	body, err := render()
	if err != nil {
		return err
	}
	if etag != "" {
		c.Header("ETag", etag)
	}
	c.Header("Cache-Control", cacheControl)
	c.Data(http.StatusOK, contentType, body)
	return nil
}
