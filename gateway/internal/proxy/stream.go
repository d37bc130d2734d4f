package proxy

import (
	"net/http"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/gateway/internal/ratelimit"
	"github.com/svcdev/svc/gateway/internal/routes"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/httpx"
)

// streamIdle is how long a stream may go without a write reaching its client before the gateway
// drops it: services send a heartbeat well within it.
const streamIdle = 2 * time.Minute

// serveStream forwards an admitted stream route: it takes the caller's stream slots (per object
// and per client IP with a key, per client IP without one), lifts the server's read and write timeouts for this response, and
// copies the service's answer through as it comes (ReverseProxy flushes text/event-stream at
// once). Streams are exempt from polite polling: they are capped instead.
func (g *Gateway) serveStream(c *gin.Context, r routes.Route, p *authn.Principal) {
	if g.Streams != nil {
		ip := ratelimit.ClientKey(c.ClientIP())
		slots := []ratelimit.Slot{{Who: "ip:" + ip, Cap: g.limits.StreamsPerKey, What: "this client address"}}
		if p != nil {
			// Keyed streams count against the object, whichever of its keys opened them, and
			// against the client address for all keys it uses.
			slots = []ratelimit.Slot{{Who: ratelimit.ObjectKey(p.ObjectID), Cap: g.limits.StreamsPerKey, What: "this object"},
				{Who: "keyed-ip:" + ip, Cap: g.limits.StreamsPerIP, What: "this client address"}}
		}
		release, err := g.Streams.Open(c.Request.Context(), slots...)
		if err != nil {
			httpx.Abort(c, err)
			return
		}
		defer release()
	}
	rc := http.NewResponseController(c.Writer)
	_ = rc.SetReadDeadline(time.Time{})
	w := &deadlineWriter{ResponseWriter: c.Writer, rc: rc}
	g.streams[r.Service].ServeHTTP(w, c.Request)
}

// deadlineWriter gives every write its own deadline, so that a client that stops reading is
// dropped while one that keeps reading is never cut off by the server's write timeout.
type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func (w *deadlineWriter) WriteHeader(status int) {
	_ = w.rc.SetWriteDeadline(time.Now().Add(streamIdle))
	w.ResponseWriter.WriteHeader(status)
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	_ = w.rc.SetWriteDeadline(time.Now().Add(streamIdle))
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController (the proxy's flushes) reach the underlying writer.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// streamBuffers are the copy buffers of stream proxies: events are small, so 4 KiB instead of
// ReverseProxy's 32 KiB per open stream.
var streamBuffers = &bufferPool{pool: sync.Pool{New: func() any { b := make([]byte, 4096); return &b }}}

type bufferPool struct{ pool sync.Pool }

func (b *bufferPool) Get() []byte  { return *b.pool.Get().(*[]byte) }
func (b *bufferPool) Put(v []byte) { b.pool.Put(&v) }

// Local serves a route the gateway answers itself (routes.Gateway) after the same admission as
// every forwarded route: limits, key, scopes.
func (g *Gateway) Local(r routes.Route, h gin.HandlerFunc) gin.HandlerFunc {
	return func(c *gin.Context) {
		if _, _, err := g.admit(c, r); err != nil {
			httpx.Abort(c, err)
			return
		}
		h(c)
	}
}
