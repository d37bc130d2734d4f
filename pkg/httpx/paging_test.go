package httpx

import (
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
)

func TestPaging(t *testing.T) {
	t.Parallel()
	ctx := func(query string) *gin.Context {
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = httptest.NewRequest("GET", "/list?"+query, nil)
		return c
	}
	limits := map[string]int{"": DefaultLimit, "limit=1": 1, "limit=200": MaxLimit, "limit=0": -1, "limit=201": -1, "limit=x": -1, "limit=-5": -1}
	for query, want := range limits {
		n, err := PageLimit(ctx(query))
		if want < 0 && (err == nil || AsError(err).Code != CodeInvalidRequest) {
			t.Errorf("PageLimit(%q) = %d, %v; want 400 INVALID_REQUEST", query, n, err)
		}
		if want >= 0 && (err != nil || n != want) {
			t.Errorf("PageLimit(%q) = %d, %v; want %d", query, n, err, want)
		}
	}
	next := EncodeCursor("obj_01h|x")
	if got, err := PageCursor(ctx("cursor=" + *next)); err != nil || got != "obj_01h|x" {
		t.Errorf("PageCursor of EncodeCursor = %q, %v", got, err)
	}
	if got, err := PageCursor(ctx("")); err != nil || got != "" {
		t.Errorf("no cursor: %q, %v", got, err)
	}
	if _, err := PageCursor(ctx("cursor=!!")); err == nil || AsError(err).Code != CodeInvalidRequest {
		t.Errorf("a cursor that is not base64url: %v, want 400", err)
	}
}
