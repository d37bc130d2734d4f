package httpx

import (
	"encoding/base64"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"
)

// TestKeyCursor: a key cursor reads back in its own list only; a made-up, altered or foreign one
// is 400.
func TestKeyCursor(t *testing.T) {
	t.Parallel()
	ctx := func(query string) *gin.Context {
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = httptest.NewRequest("GET", "/list?"+query, nil)
		return c
	}
	cur := KeyCursor("webhooks:obj_1", "whk_01")
	limit, key, err := PageKey(ctx("limit=3&cursor="+cur), "webhooks:obj_1")
	if err != nil || limit != 3 || key != "whk_01" {
		t.Fatalf("PageKey of its own cursor = %d, %q, %v", limit, key, err)
	}
	if _, key, err := PageKey(ctx(""), "webhooks:obj_1"); err != nil || key != "" {
		t.Fatalf("no cursor: %q, %v", key, err)
	}
	forged := base64.RawURLEncoding.EncodeToString([]byte("AAAAAAAAAAA.whk_02"))
	for name, q := range map[string]string{
		"foreign list": "cursor=" + KeyCursor("webhooks:obj_2", "whk_01"),
		"made up":      "cursor=" + forged,
		"bare key":     "cursor=" + base64.RawURLEncoding.EncodeToString([]byte("whk_01")),
		"not base64":   "cursor=!!",
		"bad limit":    "limit=0&cursor=" + cur,
	} {
		if _, _, err := PageKey(ctx(q), "webhooks:obj_1"); err == nil || AsError(err).Code != CodeInvalidRequest {
			t.Errorf("%s: %v, want 400 INVALID_REQUEST", name, err)
		}
	}
}
