package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/svcdev/svc/pkg/httpx"
)

// revalidate reads path with If-None-Match etag under request id rid.
func revalidate(t *testing.T, env *Env, path, key, etag, rid string) *Response {
	t.Helper()
	return env.Send(t, Request{Method: "GET", Path: path, Key: key,
		Headers: map[string]string{"If-None-Match": etag, httpx.HeaderRequestID: rid}})
}

// TestCacheablePublicReads: every public read answers with an ETag and Cache-Control, a
// revalidation with the current ETag is a 304 that reads nothing from the store, and a 2xx write
// makes the old ETag answer 200 with the new content (read-your-writes).
func TestCacheablePublicReads(t *testing.T) {
	t.Parallel()
	counter := newCommandCounter()
	env := Start(t, WithCommandMonitor(counter.monitor()))
	hash, key := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Ada\n\nFirst profile."})
	base := "/api/objects/" + hash
	reads := []string{base, base + "/llm.txt", base + "/agent-card.json", base + "/rules", base + "/context-coach.txt"}

	etags := map[string]string{}
	for _, path := range reads {
		r := env.Do(t, "GET", path, "", nil).Expect(t, http.StatusOK)
		etag := r.Header.Get("ETag")
		if !strings.HasPrefix(etag, `"`) || len(etag) < 3 {
			t.Fatalf("GET %s: ETag %q, want a quoted validator", path, etag)
		}
		if cc := r.Header.Get("Cache-Control"); cc != httpx.CacheControlRevalidate {
			t.Errorf("GET %s: Cache-Control %q, want %q", path, cc, httpx.CacheControlRevalidate)
		}
		etags[path] = etag

		rid := "etag-304-" + strings.ReplaceAll(strings.TrimPrefix(path, base), "/", "_")
		nm := revalidate(t, env, path, "", etag, rid).Expect(t, http.StatusNotModified)
		if len(nm.Body) != 0 || nm.Header.Get("ETag") != etag {
			t.Errorf("GET %s with its ETag: body %q, ETag %q; want empty and %q", path, nm.Body, nm.Header.Get("ETag"), etag)
		}
		if cmds := counter.of(rid); len(cmds) != 0 {
			t.Errorf("GET %s revalidated: %d store commands (%v), want none", path, len(cmds), cmds)
		}
		// With a key the gateway passes the revalidation on, and the service answers it.
		revalidate(t, env, path, key, etag, rid+"-owner").Expect(t, http.StatusNotModified)
		// Another validator, or a list without the current one, gets the full answer.
		revalidate(t, env, path, "", `"stale", W/"older"`, rid+"-other").Expect(t, http.StatusOK)
	}

	// A 2xx write, then every read with the ETag it had before: 200 with what the write changed.
	env.Do(t, "PUT", base+"/llm.txt", key, map[string]any{"body": "# Ada L.\n\nSecond profile."}).Expect(t, 200)
	for _, path := range reads {
		revalidate(t, env, path, key, etags[path], "etag-after-write-owner").Expect(t, http.StatusOK)
		r := revalidate(t, env, path, "", etags[path], "etag-after-write").Expect(t, http.StatusOK)
		if r.Header.Get("ETag") == etags[path] {
			t.Errorf("GET %s after a write kept ETag %s", path, etags[path])
		}
		etags[path] = r.Header.Get("ETag")
	}
	if body := string(env.Do(t, "GET", base+"/llm.txt", "", nil).Body); !strings.Contains(body, "Second profile.") {
		t.Errorf("llm.txt after the write lacks the new text:\n%s", body)
	}
	if v := Num(t, revalidate(t, env, base, "", `"stale"`, "etag-version").JSON(t), "version"); v != 2 {
		t.Errorf("object version after the write = %v, want 2", v)
	}
	env.Do(t, "PUT", base+"/rules", key, map[string]any{"body": `{"participant_admission":{"mode":"open"}}`}).Expect(t, 200)
	got := revalidate(t, env, base+"/rules", "", etags[base+"/rules"], "etag-rules").Expect(t, http.StatusOK).JSON(t)
	if !strings.Contains(MustJSON(got), `"open"`) {
		t.Errorf("rules after the write = %v, want participant_admission open", got)
	}

	// The owner's blocked list lives elsewhere: that read is never cached.
	r := env.Do(t, "GET", base+"/rules?show_blocked_list=1", key, nil).Expect(t, 200)
	if r.Header.Get("ETag") != "" {
		t.Errorf("rules with the blocked list carry ETag %q", r.Header.Get("ETag"))
	}
}

// TestPrivateObjectsAreNotRevalidated: a private object's reads carry no validator, and a
// revalidation by a stranger is the same 404 as for an unknown hash, never a 304.
func TestPrivateObjectsAreNotRevalidated(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, map[string]any{"visibility": "private", "initial_llm_txt": "# Secret"})
	for _, path := range []string{"/api/objects/" + hash + "/llm.txt", "/api/objects/" + hash + "/agent-card.json"} {
		if r := env.Do(t, "GET", path, key, nil).Expect(t, 200); r.Header.Get("ETag") != "" {
			t.Errorf("owner read of private %s carries ETag %q", path, r.Header.Get("ETag"))
		}
		env.Send(t, Request{Method: "GET", Path: path, Headers: map[string]string{"If-None-Match": "*"}}).
			ExpectError(t, http.StatusNotFound, "NOT_FOUND")
	}
}
