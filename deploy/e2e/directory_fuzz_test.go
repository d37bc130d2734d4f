package e2e

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzDirectorySearch searches the directory through the gateway with arbitrary text: every
// search answers 200 with a list, or 400 in the error shape; none is a 500. `make test` runs the
// seeds; `go test -fuzz FuzzDirectorySearch` searches further on one running suite.
func FuzzDirectorySearch(f *testing.F) {
	for _, seed := range []string{"", "ada", "\xff", "a\x00b", ".*", "(", "\\", "svc_", "ſ", strings.Repeat("x", 201), "%zz"} {
		f.Add(seed)
	}
	env := Start(f)
	env.CreateObject(f, map[string]any{"initial_llm_txt": "# Ada's (notes) [1]\n"})
	f.Fuzz(func(t *testing.T, q string) {
		resp := env.Do(t, "GET", "/api/directory?q="+url.QueryEscape(q), "", nil)
		switch resp.Status {
		case 200:
			if _, ok := resp.JSON(t)["objects"].([]any); !ok {
				t.Fatalf("q=%q: 200 without a list: %s", q, resp.Body)
			}
		case 400:
			resp.ExpectError(t, 400, "INVALID_REQUEST")
		default:
			t.Fatalf("q=%q answered %d: %s", q, resp.Status, resp.Body)
		}
	})
}
