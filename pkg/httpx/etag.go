package httpx

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/pkg/versions"
)

// CacheControlRevalidate lets any cache keep a public read but makes it ask again every time,
// so that a write is seen by the next read (read-your-writes) while an unchanged answer costs a
// 304 and no store read.
const CacheControlRevalidate = "public, no-cache"

// ETags keeps one validator per object in Redis (see package versions): every write touching
// what the object's public reads show replaces it before it answers, and a read takes it before
// it reads the store. Without Redis, reads answer 200 without an ETag; nothing is ever answered
// stale.
type ETags struct {
	tokens *versions.Tokens
	log    *slog.Logger
}

// NewETags returns the validators kept in rdb. A token lives ttl at most, which bounds how long
// content that changes without a write (a refreshed URL source) can be revalidated as unchanged.
func NewETags(rdb *redis.Client, log *slog.Logger, ttl time.Duration) *ETags {
	return &ETags{tokens: versions.New(rdb, log, etagPrefix, ttl), log: log}
}

const etagPrefix = "svc:etag:"

// Tokens returns the validators themselves, for caches that must follow the same writes.
func (e *ETags) Tokens() *versions.Tokens { return e.tokens }

// Changed replaces the object's validator; a writer calls it after its store write and before it
// answers.
func (e *ETags) Changed(ctx context.Context, objectID string) { e.tokens.Changed(ctx, objectID) }

// Cacheable serves a public read of the object that objectID names ("" for a request that must
// not be cached, such as a private object's). It answers 304 Not Modified, without running the
// handler, when If-None-Match holds the current validator; otherwise it runs the handler and adds
// ETag and Cache-Control to a 200.
func (e *ETags) Cacheable(objectID func(*gin.Context) string) gin.HandlerFunc {
	return func(c *gin.Context) {
		id := objectID(c)
		if id == "" {
			c.Next()
			return
		}
		tok, err := e.tokens.Current(c.Request.Context(), id) // made when there is none
		if err != nil {
			e.log.Warn("etag: reading a validator failed", "object_id", id, "error", err)
			c.Next()
			return
		}
		etag := `"` + tok + `"`
		if !NoneMatch(c.GetHeader("If-None-Match"), etag) {
			notModified(c, etag)
			return
		}
		c.Writer = &etagWriter{ResponseWriter: c.Writer, etag: etag}
		c.Next()
	}
}

// NotModified answers 304 when the request's If-None-Match holds the object's current validator,
// and reports whether it did. It never makes a validator: without one, the read goes on.
func (e *ETags) NotModified(c *gin.Context, objectID string) bool {
	header := c.GetHeader("If-None-Match")
	if header == "" {
		return false
	}
	tok, err := e.tokens.Peek(c.Request.Context(), objectID)
	if err != nil {
		return false
	}
	etag := `"` + tok + `"`
	if NoneMatch(header, etag) {
		return false
	}
	notModified(c, etag)
	return true
}

func notModified(c *gin.Context, etag string) {
	c.Header("ETag", etag)
	c.Header("Cache-Control", CacheControlRevalidate)
	c.AbortWithStatus(http.StatusNotModified)
}

// NoneMatch reports whether an If-None-Match header value lets etag through (RFC 9110 §13.1.2,
// weak comparison): true unless the header lists etag or is "*".
func NoneMatch(header, etag string) bool {
	if header == "" {
		return true
	}
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if tag == "*" || tag == strings.TrimPrefix(etag, "W/") {
			return false
		}
	}
	return true
}

// etagWriter adds the validator to the handler's answer when it is a 200, just before the
// headers go out.
type etagWriter struct {
	gin.ResponseWriter
	etag string
	done bool
}

func (w *etagWriter) label() {
	if w.done {
		return
	}
	w.done = true
	if w.Status() == http.StatusOK && w.Header().Get("Cache-Control") == "" {
		w.Header().Set("ETag", w.etag)
		w.Header().Set("Cache-Control", CacheControlRevalidate)
	}
}

func (w *etagWriter) WriteHeaderNow() {
	w.label()
	w.ResponseWriter.WriteHeaderNow()
}

func (w *etagWriter) Write(b []byte) (int, error) {
	w.label()
	return w.ResponseWriter.Write(b)
}

func (w *etagWriter) WriteString(s string) (int, error) {
	w.label()
	return w.ResponseWriter.WriteString(s)
}
