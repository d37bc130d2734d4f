package mcpserver

import (
	"bytes"
	"cmp"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/svcdev/svc/pkg/httpx"
)

// shapedErrors holds back a refusal the SDK's transport writes as plain text (a malformed
// JSON-RPC payload, a wrong method or Content-Type) so that Serve can answer it in the API's error
// shape, with the request's id, as every other 4xx of the gateway is answered. Every other answer
// passes through untouched.
type shapedErrors struct {
	http.ResponseWriter
	status int
	held   bytes.Buffer
}

// WriteHeader holds a plain-text error back and passes anything else on.
func (w *shapedErrors) WriteHeader(status int) {
	if status >= 400 && w.status == 0 && !strings.Contains(w.Header().Get("Content-Type"), "json") {
		w.status = status
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

// Write keeps a held error's text and passes anything else on.
func (w *shapedErrors) Write(p []byte) (int, error) {
	if w.status != 0 {
		if w.held.Len() < 4096 {
			w.held.Write(p[:min(len(p), 4096-w.held.Len())])
		}
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Flush passes a flush on unless an error is held back.
func (w *shapedErrors) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && w.status == 0 {
		f.Flush()
	}
}

// finish answers a held error in the error shape.
func (w *shapedErrors) finish(c *gin.Context) {
	if w.status == 0 {
		return
	}
	msg := cmp.Or(strings.TrimSpace(w.held.String()), http.StatusText(w.status))
	code := cmp.Or(map[int]string{
		http.StatusNotFound:              "NOT_FOUND",
		http.StatusMethodNotAllowed:      "METHOD_NOT_ALLOWED",
		http.StatusRequestEntityTooLarge: "PAYLOAD_TOO_LARGE",
		http.StatusUnauthorized:          "UNAUTHORIZED",
		http.StatusForbidden:             "FORBIDDEN",
	}[w.status], "INVALID_REQUEST")
	c.Writer.Header().Del("Content-Type")
	c.Writer.Header().Del("Content-Length")
	httpx.Abort(c, httpx.Errorf(w.status, code, "%s", msg))
}
