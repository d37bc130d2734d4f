package httpx

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
)

// A lingering close, as nginx does it: when a handler answers without reading the whole request
// body (a 413, a 401, a 429), the server sends the answer, then reads and discards what remains of
// the body, up to LingerBytes and for up to LingerTime. Closing with unread data instead makes the
// kernel reset the connection, and a client still writing its body (one blocking write of 2 MiB)
// sees the reset instead of the answer.
const (
	LingerBytes = 8 << 20
	LingerTime  = 5 * time.Second
)

// lingeringClose reads and discards, after the answer, the part of the request body the handler
// left unread (see LingerBytes).
func lingeringClose(c *gin.Context) {
	r := c.Request
	// A client that asked for 100-continue has not sent its body and will not once it has the
	// answer; HTTP/2 resets only its stream.
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody || r.ProtoMajor != 1 ||
		strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
		c.Next()
		return
	}
	rc := http.NewResponseController(c.Writer)
	// Full duplex lets the body be read after the answer is written.
	if rc.EnableFullDuplex() != nil {
		c.Next()
		return
	}
	body := &trackedBody{ReadCloser: r.Body}
	r.Body = body
	c.Next()
	if body.ended.Load() {
		return
	}
	if rc.Flush() != nil || rc.SetReadDeadline(time.Now().Add(LingerTime)) != nil {
		return
	}
	_, _ = io.CopyN(io.Discard, body.ReadCloser, LingerBytes)
}

// trackedBody records whether the handler read the body to its end (or to an error).
type trackedBody struct {
	io.ReadCloser
	ended atomic.Bool // set by whichever goroutine reads (a reverse proxy's transport reads in its own)
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.ended.Store(true)
	}
	return n, err
}
