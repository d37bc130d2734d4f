package httpx

import (
	"net/http/httptest"
	"os"
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
}

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	os.Exit(m.Run())
}

// TestSeqCursor: a position cursor reads back in its own list only; a made-up, altered or
// foreign one is 400.
func TestSeqCursor(t *testing.T) {
	t.Parallel()
	ctx := func(query string) *gin.Context {
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = httptest.NewRequest("GET", "/list?"+query, nil)
		return c
	}
	cur := SeqCursor("feed:global", 42)
	limit, before, err := PageSeq(ctx("limit=5&cursor="+cur), "feed:global")
	if err != nil || limit != 5 || before != 42 {
		t.Fatalf("PageSeq of its own cursor = %d, %d, %v; want 5, 42", limit, before, err)
	}
	if _, before, err := PageSeq(ctx(""), "feed:global"); err != nil || before != 0 {
		t.Fatalf("no cursor = %d, %v; want 0", before, err)
	}
	forged := []string{
		SeqCursor("box:obj_1", 42),                // another list's
		SeqCursor("feed:global", 43)[:4] + "AAAA", // altered
		"NDI", // "42" without a check
		"not%20base64%21",
		SeqCursor("feed:global", 0), // no such position
	}
	for _, c := range forged {
		if _, _, err := PageSeq(ctx("cursor="+c), "feed:global"); err == nil || AsError(err).Code != CodeInvalidRequest {
			t.Errorf("cursor %q: %v; want 400 INVALID_REQUEST", c, err)
		}
	}
}
