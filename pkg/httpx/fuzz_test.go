package httpx

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
)

// FuzzDecodeBytes checks that any body is decoded or refused with a 4xx in the error shape, never
// a panic or another kind of error. `make test` runs the seeds; `go test -fuzz FuzzDecodeBytes`
// searches further.
func FuzzDecodeBytes(f *testing.F) {
	for _, seed := range []string{
		`{"name":"a","count":2,"tags":["x"],"nested":{"mode":"m"}}`, ``, `{`, `[]`, `{"Name":"a"}`,
		`{"nested":{"MODE":1}}`, `{"count":1e400}`, `{"tags":[null,{}]}`, "{\"name\":\"\xff\"}", `{"a":1,"a":2}`,
	} {
		f.Add([]byte(seed))
	}
	type nested struct {
		Mode string `json:"mode"`
	}
	type target struct {
		Name   *string           `json:"name"`
		Count  int               `json:"count"`
		Tags   []string          `json:"tags"`
		Nested *nested           `json:"nested"`
		Extra  map[string]nested `json:"extra"`
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var v target
		err := DecodeBytes(body, &v)
		var e *Error
		if err != nil && (!errors.As(err, &e) || e.Status < 400 || e.Status >= 500) {
			t.Fatalf("%q: %v, want nil or a 4xx", body, err)
		}
	})
}

// FuzzQuery sends raw query strings to a list route of an engine: each is answered 200 with
// values that are UTF-8 text, or refused with 400.
func FuzzQuery(f *testing.F) {
	for _, seed := range []string{"", "q=%FF", "q=a%00b", "limit=5&cursor=b2JqXzE", "cursor=%zz", "limit=-1", "%ff=1", "q=caf%C3%A9"} {
		f.Add(seed)
	}
	e := NewEngine(slog.New(slog.NewTextHandler(io.Discard, nil)), nil)
	e.GET("/list", func(c *gin.Context) {
		if _, _, err := PageKey(c, "list"); err != nil {
			Abort(c, err)
			return
		}
		for _, v := range c.Request.URL.Query() {
			for _, s := range v {
				if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
					c.String(http.StatusTeapot, "a value that is not text reached the handler")
					return
				}
			}
		}
		c.String(http.StatusOK, "ok")
	})
	f.Fuzz(func(t *testing.T, raw string) {
		req := httptest.NewRequest(http.MethodGet, "/list", nil)
		req.URL.RawQuery = raw
		w := httptest.NewRecorder()
		e.ServeHTTP(w, req)
		if w.Code != http.StatusOK && w.Code != http.StatusBadRequest {
			t.Fatalf("query %q answered %d: %s", raw, w.Code, w.Body)
		}
	})
}
