package e2e

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// enableFeed turns a box into a feed with its owner key.
func enableFeed(t testing.TB, env *Env, hash, key string) {
	t.Helper()
	env.Do(t, "POST", "/api/objects/"+hash+"/feed", key, map[string]any{}).Expect(t, http.StatusOK)
}

// publish posts an item to a feed with key and returns the 201 answer.
func publish(t testing.TB, env *Env, box, key, title string, tags ...string) map[string]any {
	t.Helper()
	if tags == nil {
		tags = []string{}
	}
	return env.Do(t, "POST", "/api/feeds/"+box+"/items", key,
		map[string]any{"title": title, "body": "body of " + title, "tags": tags}).Expect(t, http.StatusCreated).JSON(t)
}

// feedItems reads one page of a feed (query like "?limit=2").
func feedItems(t testing.TB, env *Env, box, query string) ([]map[string]any, string) {
	t.Helper()
	m := env.Do(t, "GET", "/api/feeds/"+box+"/items"+query, "", nil).Expect(t, http.StatusOK).JSON(t)
	var out []map[string]any
	for _, it := range m["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	next, _ := m["next_cursor"].(string)
	return out, next
}

func TestFeedPublishReadAndRules(t *testing.T) {
	t.Parallel()
	env := Start(t)
	box, boxKey := env.CreateObject(t, map[string]any{"initial_llm_txt": "# The Box\nA box with a feed."})
	author, authorKey := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Ada Author\n"})
	_, strangerKey := env.CreateObject(t, nil)

	// Not a feed yet: 404; turning it on needs the owner.
	env.Do(t, "POST", "/api/feeds/"+box+"/items", authorKey, map[string]any{"title": "x", "body": ""}).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "GET", "/api/feeds/"+box+"/items", "", nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "POST", "/api/objects/"+box+"/feed", authorKey, map[string]any{}).ExpectError(t, 403, "FORBIDDEN")
	enableFeed(t, env, box, boxKey)
	enableFeed(t, env, box, boxKey) // again: no change

	it := publish(t, env, box, authorKey, "Working on the parser", "working", "claim", "working")
	who := it["who"].(map[string]any)
	if who["svc"] != author || who["name"] != "Ada Author" {
		t.Errorf("who = %v, want svc %s and name Ada Author", who, author)
	}
	if fmt.Sprint(it["tags"]) != "[working claim]" {
		t.Errorf("tags = %v, want [working claim] (repeats dropped)", it["tags"])
	}

	// Publishing needs a key; tags are from the spec's list; unknown fields and missing title are 400.
	env.Do(t, "POST", "/api/feeds/"+box+"/items", "", map[string]any{"title": "x", "body": ""}).ExpectError(t, 401, "UNAUTHORIZED")
	env.Do(t, "POST", "/api/feeds/"+box+"/items", authorKey, map[string]any{"title": "x", "body": "", "tags": []string{"urgent"}}).ExpectError(t, 400, "INVALID_REQUEST")
	env.Do(t, "POST", "/api/feeds/"+box+"/items", authorKey, map[string]any{"body": ""}).ExpectError(t, 400, "MISSING_FIELD")
	env.Do(t, "POST", "/api/feeds/"+box+"/items", authorKey, map[string]any{"title": "x", "body": "", "color": "red"}).ExpectError(t, 400, "UNKNOWN_FIELD")

	publish(t, env, box, strangerKey, "A stranger says hi")

	items, _ := feedItems(t, env, box, "")
	if len(items) != 2 || items[0]["title"] != "A stranger says hi" || items[1]["id"] != it["id"] {
		t.Fatalf("feed = %v, want the stranger's item then the author's, newest first", items)
	}

	// Only the box owner hides; a hidden item leaves every read and leaves a tombstone.
	env.Do(t, "DELETE", "/api/feeds/"+box+"/items/"+Str(t, it, "id"), authorKey, nil).ExpectError(t, 403, "FORBIDDEN")
	env.Do(t, "DELETE", "/api/feeds/"+box+"/items/itm_nope", boxKey, nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "DELETE", "/api/feeds/"+box+"/items/"+Str(t, it, "id"), boxKey, nil).Expect(t, 200)
	items, _ = feedItems(t, env, box, "")
	if len(items) != 2 || items[1]["hidden"] != true || items[1]["title"] != nil || items[1]["who"] != nil {
		t.Fatalf("after hiding, feed = %v, want the second entry a tombstone without content", items)
	}

	// A sender the box blocks may not publish to it, once feed-svc has projected mailbox-svc's
	// sender.blocked (moments).
	blocked, blockedKey := env.CreateObject(t, nil)
	env.Do(t, "POST", "/api/objects/"+box+"/sender-blocks", boxKey, map[string]any{"blocked_hash": blocked}).Expect(t, 201)
	env.Eventually(t, func() bool {
		r := env.Do(t, "POST", "/api/feeds/"+box+"/items", blockedKey, map[string]any{"title": "let me in", "body": ""})
		return r.Status == http.StatusForbidden && strings.Contains(string(r.Body), "SENDER_BLOCKED")
	}, "the blocked sender's publish is refused with 403 SENDER_BLOCKED")
	env.Do(t, "DELETE", "/api/objects/"+box+"/sender-blocks/"+blocked, boxKey, nil).Expect(t, 200)
	env.Eventually(t, func() bool {
		return env.Do(t, "POST", "/api/feeds/"+box+"/items", blockedKey, map[string]any{"title": "back", "body": ""}).Status == http.StatusCreated
	}, "the unblocked sender publishes again")
}

// hostileProfile is a profile that tries every way to run code on the box page.
const hostileProfile = "# Ada Lovelace\n\nAnalyst of **engines**.\n\n" +
	"<script>window.__pwned = 1; console.error('pwned')</script>\n\n" +
	"<img src=x onerror=\"window.__pwned = 2\">\n\n" +
	"[click me](javascript:window.__pwned=3)\n\n" +
	"<a href=\"#\" onclick=\"window.__pwned=4\">inline handler</a>\n"

func TestBoxPage(t *testing.T) {
	t.Parallel()
	env := Start(t)
	box, key := env.CreateObject(t, map[string]any{"initial_llm_txt": hostileProfile})
	enableFeed(t, env, box, key)
	for i := range 12 {
		publish(t, env, box, key, fmt.Sprintf("Update number %d <b>bold?</b>", i), "working")
	}
	hidden := publish(t, env, box, key, "Hidden update")
	env.Do(t, "DELETE", "/api/feeds/"+box+"/items/"+Str(t, hidden, "id"), key, nil).Expect(t, 200)

	page := env.Do(t, "GET", "/"+box, "", nil).Expect(t, http.StatusOK)
	html := string(page.Body)
	if ct := page.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("Content-Type = %q, want text/html", ct)
	}
	for _, want := range []string{
		"<title>Ada Lovelace · svc</title>", "<strong>engines</strong>", "Update number 11", "Update number 2",
		"&lt;b&gt;bold?&lt;/b&gt;", "/api/objects/" + box + "/llm.txt", "/api/objects/" + box + "/agent-card.json",
		"/api/messages", `"to_hash": "` + box + `"`,
	} {
		if !strings.Contains(html, want) {
			t.Errorf("the box page lacks %q", want)
		}
	}
	// The pages' own script is the one script on the page, admitted by its hash alone.
	if n := strings.Count(html, "<script"); n != 1 {
		t.Errorf("the box page holds %d scripts, want only the pages' own", n)
	} else {
		start := strings.Index(html, "<script>") + len("<script>")
		sum := sha256.Sum256([]byte(html[start : start+strings.Index(html[start:], "</script>")]))
		if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") {
			t.Errorf("the page's script is not the one its Content-Security-Policy admits: %q", csp)
		}
	}
	for _, never := range []string{"onerror", "onclick", "javascript:", "Update number 1 &lt;", "Update number 0 ", "Hidden update"} {
		if strings.Contains(html, never) {
			t.Errorf("the box page holds %q", never)
		}
	}
	if n := strings.Count(html, `class="item"`); n != 10 {
		t.Errorf("the box page shows %d items, want the latest ten", n)
	}
	if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy = %q, want scripts refused", csp)
	}

	secret, secretKey := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Secret\n", "visibility": "private"})
	for _, path := range []string{"/" + secret, "/svc_nosuchboxatall"} {
		r := env.Do(t, "GET", path, "", nil).Expect(t, http.StatusNotFound)
		if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(r.Body), "No such box") ||
			strings.Contains(string(r.Body), "Secret") {
			t.Errorf("GET %s: %s %q, want the not-found page", path, r.Header.Get("Content-Type"), r.Body)
		}
	}
	// Its owner sees a private box's page.
	env.Do(t, "GET", "/"+secret, secretKey, nil).Expect(t, http.StatusOK)
}
