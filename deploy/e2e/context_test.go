package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/transport"
	"github.com/go-git/go-git/v5/plumbing/transport/server"
	"github.com/segmentio/kafka-go"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

const allowPrivate = "OUTBOUND_ALLOW_PRIVATE"

// TestContextProfileAndVersions covers the profile's life: readable right after creation, every
// write visible at once in the object read (read-your-writes across services), and every version
// listed and readable.
func TestContextProfileAndVersions(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Ada\n\nFirst profile."})
	base := "/api/objects/" + hash

	llm := env.Do(t, "GET", base+"/llm.txt", "", nil).Expect(t, 200)
	if ct := llm.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("llm.txt Content-Type %q", ct)
	}
	for _, want := range []string{"# Ada", "First profile.", "## How to message this object", `"to_hash": "` + hash + `"`, "/api/messages"} {
		if !strings.Contains(string(llm.Body), want) {
			t.Errorf("llm.txt right after creation lacks %q:\n%s", want, llm.Body)
		}
	}

	w := env.Do(t, "PUT", base+"/llm.txt", key, map[string]any{"body": "# Ada L.\n\nSecond profile."}).Expect(t, 200).JSON(t)
	if w["ok"] != true || Num(t, w, "version") != 2 {
		t.Fatalf("PUT llm.txt answered %v, want ok and version 2", w)
	}
	obj := env.Do(t, "GET", base, "", nil).Expect(t, 200).JSON(t)
	if Num(t, obj, "version") != 2 || Str(t, obj, "updated_at") != Str(t, w, "updated_at") {
		t.Errorf("object read after PUT llm.txt: %v, want version 2 updated at %v", obj, w["updated_at"])
	}
	if body := string(env.Do(t, "GET", base+"/llm.txt", "", nil).Expect(t, 200).Body); !strings.Contains(body, "Second profile.") || strings.Contains(body, "First profile.") {
		t.Errorf("llm.txt after the write:\n%s", body)
	}

	rules := map[string]any{"respond": map[string]any{"mode": "manual", "policy": "Replies within a week."}}
	w = env.Do(t, "PUT", base+"/context", key, map[string]any{"llm_txt": "# Ada Lovelace\n\nThird.", "rules": rules}).Expect(t, 200).JSON(t)
	if Num(t, w, "version") != 3 {
		t.Fatalf("PUT context answered %v, want version 3", w)
	}
	if v := Num(t, env.Do(t, "GET", base, "", nil).JSON(t), "version"); v != 3 {
		t.Errorf("object version after PUT context = %v, want 3", v)
	}
	ctx := env.Do(t, "GET", base+"/context", key, nil).Expect(t, 200).JSON(t)
	sections := ctx["sections"].([]any)
	if ctx["hash"] != hash || ctx["llm_txt"] != "# Ada Lovelace\n\nThird." || len(sections) != 1 ||
		sections[0].(map[string]any)["title"] != "Ada Lovelace" {
		t.Errorf("GET context = %v", ctx)
	}
	if got := env.Do(t, "GET", base+"/rules", "", nil).Expect(t, 200).JSON(t); MustJSON(got) != MustJSON(rules) {
		t.Errorf("public rules = %v, want %v", got, rules)
	}

	list := env.Do(t, "GET", base+"/versions", key, nil).Expect(t, 200).JSON(t)
	var changes []string
	for _, v := range list["versions"].([]any) {
		changes = append(changes, fmt.Sprint(v.(map[string]any)["version"], ":", v.(map[string]any)["change"]))
	}
	if want := []string{"3:context", "2:llm_txt", "1:created"}; !slices.Equal(changes, want) || list["next_cursor"] != nil {
		t.Errorf("versions = %v (next %v), want %v", changes, list["next_cursor"], want)
	}
	page := env.Do(t, "GET", base+"/versions?limit=2", key, nil).Expect(t, 200).JSON(t)
	if len(page["versions"].([]any)) != 2 || page["next_cursor"] == nil {
		t.Fatalf("first page of 2: %v", page)
	}
	rest := env.Do(t, "GET", base+"/versions?limit=2&cursor="+Str(t, page, "next_cursor"), key, nil).Expect(t, 200).JSON(t)
	if vs := rest["versions"].([]any); len(vs) != 1 || Num(t, vs[0].(map[string]any), "version") != 1 || rest["next_cursor"] != nil {
		t.Errorf("second page: %v", rest)
	}
	v2 := env.Do(t, "GET", base+"/versions?version=2", key, nil).Expect(t, 200).JSON(t)
	if v2["llm_txt"] != "# Ada L.\n\nSecond profile." || v2["title"] != "Ada L." || v2["change"] != "llm_txt" {
		t.Errorf("version 2 = %v", v2)
	}
	if v1 := env.Do(t, "GET", base+"/versions?version=1", key, nil).Expect(t, 200).JSON(t); v1["llm_txt"] != "# Ada\n\nFirst profile." {
		t.Errorf("version 1 = %v", v1)
	}
	env.Do(t, "GET", base+"/versions?version=9", key, nil).ExpectError(t, 404, "NOT_FOUND")

	card := env.Do(t, "GET", base+"/agent-card.json", "", nil).Expect(t, 200).JSON(t)
	if card["name"] != "Ada Lovelace" || card["description"] != "Third." || card["version"] != "3" ||
		MustJSON(card["supportedInterfaces"]) != MustJSON([]map[string]string{{"url": env.URL + "/api/objects/" + hash + "/a2a",
			"protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}}) || !strings.Contains(MustJSON(card["skills"]), "Replies within a week.") {
		t.Errorf("agent card = %v", card)
	}
	coach := env.Do(t, "GET", base+"/context-coach.txt", "", nil).Expect(t, 200)
	if ct := coach.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" || !strings.Contains(string(coach.Body), "Ask:") ||
		!strings.Contains(string(coach.Body), hash) {
		t.Errorf("coach (%s):\n%s", ct, coach.Body)
	}
}

// TestContextConcurrentWritesKeepEveryVersion writes concurrently through two replicas: every
// write gets its own version and none is lost; decision-memory writes among them count on
// decision memory's own versions, the others on the context's.
func TestContextConcurrentWritesKeepEveryVersion(t *testing.T) {
	t.Parallel()
	env := Start(t, WithReplicas("context-svc", 2))
	hash, key := env.CreateObject(t, nil)
	base := "/api/objects/" + hash
	const writers, memoryWriters = 12, 4 // every third writer writes decision memory
	type written struct {
		memory  bool
		version int
	}
	got := make(chan written, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			memory := i%3 == 0
			path, body := base+"/llm.txt", any(map[string]any{"body": fmt.Sprintf("# Writer %d", i)})
			if memory {
				path, body = base+"/decision-memory", map[string]any{"body": fmt.Sprintf("memory %d", i)}
			}
			resp := env.send(t, Request{Method: "PUT", Path: path, Key: key, Body: body})
			if resp.Status != 200 {
				t.Errorf("concurrent PUT %s: %d %s", path, resp.Status, resp.Body)
				return
			}
			var out struct{ Version int }
			resp.Decode(t, &out)
			got <- written{memory, out.Version}
		})
	}
	wg.Wait()
	close(got)
	var contextVersions, memoryVersions []int
	for w := range got {
		if w.memory {
			memoryVersions = append(memoryVersions, w.version)
		} else {
			contextVersions = append(contextVersions, w.version)
		}
	}
	slices.Sort(contextVersions)
	slices.Sort(memoryVersions)
	wantContext, wantMemory := make([]int, writers-memoryWriters), make([]int, memoryWriters)
	for i := range wantContext {
		wantContext[i] = i + 2
	}
	for i := range wantMemory {
		wantMemory[i] = i + 1
	}
	if !slices.Equal(contextVersions, wantContext) || !slices.Equal(memoryVersions, wantMemory) {
		t.Fatalf("concurrent writes got context versions %v and memory versions %v, want each of %v and %v once",
			contextVersions, memoryVersions, wantContext, wantMemory)
	}
	list := env.Do(t, "GET", base+"/versions?limit=200", key, nil).Expect(t, 200).JSON(t)["versions"].([]any)
	if len(list) != writers-memoryWriters+1 {
		t.Errorf("versions lists %d versions, want %d", len(list), writers-memoryWriters+1)
	}
	// The object read shows the newest version once the writes have returned.
	last := env.Do(t, "PUT", base+"/llm.txt", key, map[string]any{"body": "# Last"}).Expect(t, 200).JSON(t)
	want := writers - memoryWriters + 2
	if Num(t, last, "version") != float64(want) || Num(t, env.Do(t, "GET", base, "", nil).JSON(t), "version") != float64(want) {
		t.Errorf("a write after the concurrent ones answered %v; the object read must show version %d", last, want)
	}
	mem := env.Do(t, "GET", base+"/decision-memory", key, nil).Expect(t, 200).JSON(t)
	if n := len(mem["versions"].([]any)); n != memoryWriters || Num(t, mem, "version") != memoryWriters {
		t.Errorf("decision memory lists %d versions at version %v, want %d", n, mem["version"], memoryWriters)
	}
}

// TestContextPrivateObject: a private object's profile, coach and agent card are 404 to the
// public and to other objects' keys, and readable with its own key.
func TestContextPrivateObject(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Hidden\n\nprivate-profile-marker", "visibility": "private"})
	_, otherKey := env.CreateObject(t, nil)
	for _, route := range []string{"/llm.txt", "/context-coach.txt", "/agent-card.json"} {
		path := "/api/objects/" + hash + route
		env.Do(t, "GET", path, "", nil).ExpectError(t, 404, "NOT_FOUND")
		env.Do(t, "GET", path, otherKey, nil).ExpectError(t, 404, "NOT_FOUND")
		own := env.Do(t, "GET", path, key, nil).Expect(t, 200)
		if own.Header.Get("Cache-Control") != "private, no-store" {
			t.Errorf("owner read of %s: Cache-Control %q", route, own.Header.Get("Cache-Control"))
		}
		if route == "/llm.txt" && !strings.Contains(string(own.Body), "private-profile-marker") {
			t.Errorf("owner read of the private llm.txt:\n%s", own.Body)
		}
	}
}

// TestContextSourcesAndLinks adds URL and text sources, composes the included ones into llm.txt,
// toggles inclusion through PUT context, and shares a selection through a public context link.
func TestContextSourcesAndLinks(t *testing.T) {
	t.Parallel()
	var pageHits atomic.Int64
	site := http.NewServeMux()
	site.HandleFunc("/page", func(w http.ResponseWriter, _ *http.Request) {
		pageHits.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>t</title><style>.x{color:red}</style></head>
<body><h1>Remote page</h1><p>remote-marker &amp; more</p><script>var s = "script-marker"</script></body></html>`)
	})
	srv := httptest.NewServer(site)
	defer srv.Close()
	env := Start(t, WithEnv(allowPrivate, "true"))
	hash, key := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Box"})
	base := "/api/objects/" + hash

	s1 := env.Do(t, "POST", base+"/sources", key, map[string]any{"kind": "url", "title": "Homepage", "url": srv.URL + "/page"}).Expect(t, 201).JSON(t)
	if s1["included"] != true || s1["url"] != srv.URL+"/page" || s1["kind"] != "url" {
		t.Errorf("created url source = %v", s1)
	}
	if v := Num(t, env.Do(t, "GET", base, "", nil).JSON(t), "version"); v != 2 {
		t.Errorf("object version after adding an included source = %v, want 2", v)
	}
	s2 := env.Do(t, "POST", base+"/sources", key, map[string]any{"kind": "text", "title": "Notes", "text": "text-marker", "included": false}).Expect(t, 201).JSON(t)
	if s2["included"] != false || s2["text"] != "text-marker" {
		t.Errorf("created text source = %v", s2)
	}
	if v := Num(t, env.Do(t, "GET", base, "", nil).JSON(t), "version"); v != 2 {
		t.Errorf("object version after adding a source left out = %v, want 2", v)
	}
	id1, id2 := Str(t, s1, "id"), Str(t, s2, "id")

	llm := string(env.Do(t, "GET", base+"/llm.txt", "", nil).Expect(t, 200).Body)
	for _, want := range []string{"## Homepage", "Source (url): " + srv.URL + "/page", "Remote page", "remote-marker & more"} {
		if !strings.Contains(llm, want) {
			t.Errorf("llm.txt lacks %q:\n%s", want, llm)
		}
	}
	if strings.Contains(llm, "script-marker") || strings.Contains(llm, "color:red") || strings.Contains(llm, "text-marker") {
		t.Errorf("llm.txt shows a script, a style or a source left out:\n%s", llm)
	}

	first := env.Do(t, "GET", base+"/sources?limit=1", key, nil).Expect(t, 200).JSON(t)
	if srcs := first["sources"].([]any); len(srcs) != 1 || srcs[0].(map[string]any)["id"] != id1 || first["next_cursor"] == nil {
		t.Fatalf("first page of sources: %v", first)
	}
	second := env.Do(t, "GET", base+"/sources?limit=1&cursor="+Str(t, first, "next_cursor"), key, nil).Expect(t, 200).JSON(t)
	if srcs := second["sources"].([]any); len(srcs) != 1 || srcs[0].(map[string]any)["id"] != id2 || second["next_cursor"] != nil {
		t.Fatalf("second page of sources: %v", second)
	}

	w := env.Do(t, "PUT", base+"/context", key, map[string]any{"llm_txt": "# Box", "sections": []any{
		map[string]any{"id": id2, "included": true}, map[string]any{"id": id1, "included": false},
	}}).Expect(t, 200).JSON(t)
	if Num(t, w, "version") != 3 {
		t.Errorf("PUT context with sections: %v", w)
	}
	llm = string(env.Do(t, "GET", base+"/llm.txt", "", nil).Expect(t, 200).Body)
	if !strings.Contains(llm, "text-marker") || strings.Contains(llm, "remote-marker") {
		t.Errorf("llm.txt after swapping the included sources:\n%s", llm)
	}
	sections := env.Do(t, "GET", base+"/context", key, nil).Expect(t, 200).JSON(t)["sections"].([]any)
	if len(sections) != 3 || sections[1].(map[string]any)["included"] != false || sections[2].(map[string]any)["included"] != true {
		t.Errorf("sections after the swap: %v", sections)
	}
	if v3 := env.Do(t, "GET", base+"/versions?version=3", key, nil).Expect(t, 200).JSON(t); MustJSON(v3["source_ids"]) != MustJSON([]string{id2}) {
		t.Errorf("version 3 source_ids = %v, want [%s]", v3["source_ids"], id2)
	}

	link := env.Do(t, "POST", base+"/context-links", key, map[string]any{
		"title": "For Grace", "note": "Selected notes", "source_ids": []string{id2, id1},
	}).Expect(t, 201).JSON(t)
	linkID := Str(t, link, "link_id")
	if link["url"] != env.URL+"/context/"+linkID || MustJSON(link["source_ids"]) != MustJSON([]string{id2, id1}) {
		t.Errorf("created link = %v", link)
	}
	pub := env.Do(t, "GET", "/api/context-links/"+linkID, "", nil).Expect(t, 200).JSON(t)
	composed := Str(t, pub, "context")
	if pub["title"] != "For Grace" || pub["note"] != "Selected notes" || !strings.Contains(composed, "text-marker") ||
		!strings.Contains(composed, "remote-marker") || strings.Index(composed, "text-marker") > strings.Index(composed, "remote-marker") {
		t.Errorf("public link = %v", pub)
	}
	page := env.Do(t, "GET", "/context/"+linkID, "", nil).Expect(t, 200)
	if ct := page.Header.Get("Content-Type"); ct != "text/markdown; charset=utf-8" ||
		!strings.HasPrefix(string(page.Body), "# For Grace\n\nSelected notes\n\n") || !strings.Contains(string(page.Body), composed) {
		t.Errorf("/context/%s (%s):\n%s", linkID, ct, page.Body)
	}
	links := env.Do(t, "GET", base+"/context-links", key, nil).Expect(t, 200).JSON(t)
	if l := links["links"].([]any); len(l) != 1 || l[0].(map[string]any)["link_id"] != linkID {
		t.Errorf("links = %v", links)
	}
	env.Do(t, "GET", "/api/context-links/lnk_nosuchlink", "", nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "GET", "/context/nosuchlink", "", nil).ExpectError(t, 404, "NOT_FOUND")
	if n := pageHits.Load(); n != 1 {
		t.Errorf("the URL source was fetched %d times, want once (its content is reused while fresh)", n)
	}
}

// TestContextOutboundRefusesPrivateAddresses runs without OUTBOUND_ALLOW_PRIVATE: sources and
// sync may not reach loopback, neither by a literal address nor by a name resolving to it.
func TestContextOutboundRefusesPrivateAddresses(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "internal-marker")
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	env := Start(t)
	hash, key := env.CreateObject(t, nil)
	base := "/api/objects/" + hash
	for _, u := range []string{srv.URL, "http://169.254.169.254/latest/meta-data/", "http://[::1]" + port, "file:///etc/passwd"} {
		env.Do(t, "POST", base+"/sources", key, map[string]any{"kind": "url", "url": u}).ExpectError(t, 400, "INVALID_URL")
	}
	env.Do(t, "POST", base+"/sources", key, map[string]any{"kind": "url", "title": "Local", "url": "http://localhost" + port + "/"}).Expect(t, 201)
	llm := string(env.Do(t, "GET", base+"/llm.txt", "", nil).Expect(t, 200).Body)
	if strings.Contains(llm, "internal-marker") || !strings.Contains(llm, "(This source could not be fetched.)") {
		t.Errorf("llm.txt with a source on loopback:\n%s", llm)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback server was reached %d times", n)
	}
	for _, u := range []string{"file://" + t.TempDir(), "http://example.com/repo.git", "ssh://git@example.com/repo.git", "https://user:pw@example.com/r.git"} {
		env.Do(t, "PUT", base+"/sync", key, map[string]any{"repo_url": u}).ExpectError(t, 400, "INVALID_URL")
	}
	// A loopback repository is refused when it is configured, as it would be when pulled.
	env.Do(t, "PUT", base+"/sync", key, map[string]any{"repo_url": "https://localhost" + port + "/repo.git"}).ExpectError(t, 400, "INVALID_URL")
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback server was reached %d times by sync", n)
	}
}

// TestContextSyncFromGitRepository pulls llm.txt from a real repository made with go-git.
func TestContextSyncFromGitRepository(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.Main}})
	if err != nil {
		t.Fatal(err)
	}
	commit := func(content string) string {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, "docs"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "docs", "llm.txt"), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		wt, err := repo.Worktree()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := wt.Add("docs/llm.txt"); err != nil {
			t.Fatal(err)
		}
		h, err := wt.Commit("profile", &git.CommitOptions{Author: &object.Signature{Name: "Ada", Email: "ada@example.com", When: time.Now()}})
		if err != nil {
			t.Fatal(err)
		}
		return h.String()
	}
	first := commit("# From git\n\ngit-marker-1\n")

	env := Start(t, WithEnv(allowPrivate, "true"))
	hash, key := env.CreateObject(t, nil)
	base := "/api/objects/" + hash
	env.Do(t, "POST", base+"/sync", key, nil).ExpectError(t, 409, "CONFLICT")
	cfg := env.Do(t, "PUT", base+"/sync", key, map[string]any{"repo_url": "file://" + dir, "branch": "main", "file_path": "./docs/llm.txt"}).Expect(t, 200).JSON(t)
	if cfg["ok"] != true || cfg["file_path"] != "docs/llm.txt" || cfg["branch"] != "main" || cfg["repo_url"] != "file://"+dir {
		t.Errorf("sync configuration = %v", cfg)
	}
	pulled := env.Do(t, "POST", base+"/sync", key, nil).Expect(t, 200).JSON(t)
	if pulled["ok"] != true || Num(t, pulled, "version") != 2 || pulled["commit"] != first {
		t.Fatalf("first pull = %v, want version 2 at commit %s", pulled, first)
	}
	if v := Num(t, env.Do(t, "GET", base, "", nil).JSON(t), "version"); v != 2 {
		t.Errorf("object version after the pull = %v", v)
	}
	if llm := string(env.Do(t, "GET", base+"/llm.txt", "", nil).Expect(t, 200).Body); !strings.Contains(llm, "git-marker-1") {
		t.Errorf("llm.txt after the pull:\n%s", llm)
	}
	again := env.Do(t, "POST", base+"/sync", key, map[string]any{}).Expect(t, 200).JSON(t)
	if Num(t, again, "version") != 2 || again["commit"] != first {
		t.Errorf("pulling an unchanged file = %v, want version 2 again", again)
	}
	second := commit("# From git\n\ngit-marker-2\n")
	pulled = env.Do(t, "POST", base+"/sync", key, nil).Expect(t, 200).JSON(t)
	if Num(t, pulled, "version") != 3 || pulled["commit"] != second {
		t.Errorf("second pull = %v, want version 3 at %s", pulled, second)
	}
	if v := env.Do(t, "GET", base+"/versions?version=3", key, nil).Expect(t, 200).JSON(t); v["change"] != "sync" || !strings.Contains(Str(t, v, "llm_txt"), "git-marker-2") {
		t.Errorf("version 3 = %v", v)
	}

	env.Do(t, "PUT", base+"/sync", key, map[string]any{"repo_url": "file://" + dir, "file_path": "missing.txt"}).Expect(t, 200)
	env.Do(t, "POST", base+"/sync", key, nil).ExpectError(t, 400, "INVALID_REQUEST")
	env.Do(t, "PUT", base+"/sync", key, map[string]any{"repo_url": "file://" + dir, "branch": "nope"}).Expect(t, 200)
	env.Do(t, "POST", base+"/sync", key, nil).ExpectError(t, 400, "INVALID_REQUEST")
	env.Do(t, "PUT", base+"/sync", key, map[string]any{"repo_url": "file://" + t.TempDir()}).Expect(t, 200)
	env.Do(t, "POST", base+"/sync", key, nil).ExpectError(t, 400, "INVALID_REQUEST")
	if v := Num(t, env.Do(t, "GET", base, "", nil).JSON(t), "version"); v != 3 {
		t.Errorf("failed pulls moved the version to %v", v)
	}
}

// TestContextSyncOverHTTPS pulls llm.txt from a git smart-HTTP server over TLS, trusted through
// OUTBOUND_CA_FILE: the path of real https remotes, through the SSRF-guarded client.
func TestContextSyncOverHTTPS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	repo, err := git.PlainInitWithOptions(dir, &git.PlainInitOptions{InitOptions: git.InitOptions{DefaultBranch: plumbing.Main}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "llm.txt"), []byte("# Over https\n\nhttps-marker\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	wt, _ := repo.Worktree()
	if _, err := wt.Add("llm.txt"); err != nil {
		t.Fatal(err)
	}
	head, err := wt.Commit("profile", &git.CommitOptions{Author: &object.Signature{Name: "Ada", Email: "ada@example.com", When: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(smartGit(t, repo))
	defer srv.Close()
	caFile := caFileOf(t, srv)

	env := Start(t, WithEnv(allowPrivate, "true"), WithEnv("OUTBOUND_CA_FILE", caFile))
	hash, key := env.CreateObject(t, nil)
	base := "/api/objects/" + hash
	env.Do(t, "PUT", base+"/sync", key, map[string]any{"repo_url": srv.URL + "/profile.git"}).Expect(t, 200)
	pulled := env.Do(t, "POST", base+"/sync", key, nil).Expect(t, 200).JSON(t)
	if Num(t, pulled, "version") != 2 || pulled["commit"] != head.String() {
		t.Fatalf("pull over https = %v, want version 2 at %s", pulled, head)
	}
	if llm := string(env.Do(t, "GET", base+"/llm.txt", "", nil).Expect(t, 200).Body); !strings.Contains(llm, "https-marker") {
		t.Errorf("llm.txt after the https pull:\n%s", llm)
	}
	env.Do(t, "PUT", base+"/sync", key, map[string]any{"repo_url": srv.URL + "/other.git"}).Expect(t, 200)
	env.Do(t, "POST", base+"/sync", key, nil).ExpectError(t, 400, "INVALID_REQUEST")
}

// smartGit serves repo over git's smart HTTP protocol (upload-pack only), with go-git's server.
func smartGit(t *testing.T, repo *git.Repository) http.Handler {
	upload := server.NewServer(server.MapLoader{"file:///profile.git": repo.Storer})
	ep, err := transport.NewEndpoint("file:///profile.git")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /profile.git/info/refs", func(w http.ResponseWriter, r *http.Request) {
		sess, err := upload.NewUploadPackSession(ep, nil)
		if err != nil || r.URL.Query().Get("service") != "git-upload-pack" {
			http.Error(w, "no", http.StatusForbidden)
			return
		}
		adv, err := sess.AdvertisedReferencesContext(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		adv.Prefix = [][]byte{[]byte("# service=git-upload-pack"), pktline.Flush}
		w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
		_ = adv.Encode(w)
	})
	mux.HandleFunc("POST /profile.git/git-upload-pack", func(w http.ResponseWriter, r *http.Request) {
		req := packp.NewUploadPackRequest()
		if err := req.Decode(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		sess, _ := upload.NewUploadPackSession(ep, nil)
		resp, err := sess.UploadPack(r.Context(), req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/x-git-upload-pack-result")
		_ = resp.Encode(w)
	})
	return mux
}

// TestDecisionMemory writes and rebuilds decision memory; the rebuild reads decision.recorded
// events as graph-svc publishes them, keeping major decisions only.
func TestDecisionMemory(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, nil)
	base := "/api/objects/" + hash + "/decision-memory"
	empty := env.Do(t, "GET", base, key, nil).Expect(t, 200).JSON(t)
	if empty["memory"] != "" || Num(t, empty, "version") != 0 || len(empty["versions"].([]any)) != 0 {
		t.Errorf("decision memory before any write = %v", empty)
	}
	w := env.Do(t, "PUT", base, key, map[string]any{"body": "# Decisions\n\nWe use Go."}).Expect(t, 200).JSON(t)
	if Num(t, w, "version") != 1 || Num(t, env.Do(t, "GET", "/api/objects/"+hash, "", nil).JSON(t), "version") != 1 {
		t.Errorf("PUT decision-memory = %v, want memory version 1 and the object's context version still 1", w)
	}
	rebuilt := env.Do(t, "POST", base, key, nil).Expect(t, 200).JSON(t)
	if rebuilt["ok"] != true || Num(t, rebuilt, "version") != 2 || Num(t, rebuilt, "rebuilt_from_decisions") != 0 ||
		Num(t, env.Do(t, "GET", "/api/objects/"+hash, "", nil).JSON(t), "version") != 1 {
		t.Errorf("rebuild without decisions = %v, want memory version 2 and the context version still 1", rebuilt)
	}
	mem := env.Do(t, "GET", base, key, nil).Expect(t, 200).JSON(t)
	if !strings.Contains(Str(t, mem, "memory"), "no major thread decisions") || Num(t, mem, "version") != 2 ||
		MustJSON(versionNumbers(mem["versions"])) != "[2,1]" {
		t.Errorf("decision memory after an empty rebuild = %v", mem)
	}
	if changes := MustJSON(mem["versions"].([]any)[0].(map[string]any)["change"]) + MustJSON(mem["versions"].([]any)[1].(map[string]any)["change"]); changes != `"rebuild""put"` {
		t.Errorf("decision memory versions' changes %s, want rebuild then put", changes)
	}
	first := env.Do(t, "GET", base+"?version=1", key, nil).Expect(t, 200).JSON(t)
	if first["memory"] != "# Decisions\n\nWe use Go." || Num(t, first, "version") != 1 || first["change"] != "put" {
		t.Errorf("decision memory version 1 = %v", first)
	}
	env.Do(t, "GET", base+"?version=3", key, nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "GET", base+"?version=0", key, nil).ExpectError(t, 400, "INVALID_REQUEST")
	env.Do(t, "GET", base+"?version=1&format=json", key, nil).ExpectError(t, 400, "INVALID_REQUEST")
	page := env.Do(t, "GET", base+"?limit=1", key, nil).Expect(t, 200).JSON(t)
	next := env.Do(t, "GET", base+"?limit=1&cursor="+Str(t, page, "next_cursor"), key, nil).Expect(t, 200).JSON(t)
	if MustJSON(versionNumbers(page["versions"])) != "[2]" || MustJSON(versionNumbers(next["versions"])) != "[1]" || next["next_cursor"] != nil {
		t.Errorf("decision memory versions by pages of one: %v then %v", page, next)
	}

	objectID := env.Internal(t, "identity-svc", "GET", "/internal/v1/resolve/"+hash)["object_id"].(string)
	prod := events.NewProducer(env.Brokers, env.Name+".")
	defer prod.Close()
	high, low := 0.9, 0.2
	decisions := []contract.DecisionRecordedData{
		{ThreadID: "thr_1", NodeID: "nod_1", Title: "Ship v1 in March", Body: "Agreed with Grace.", Confidence: &high, CreatedAt: "2026-01-01T00:00:00.000Z"},
		{ThreadID: "thr_1", NodeID: "nod_2", Title: "Maybe a logo later", Confidence: &low, CreatedAt: "2026-01-02T00:00:00.000Z"},
		{ThreadID: "thr_2", NodeID: "nod_3", Title: "Write it in Go", CreatedAt: "2026-01-03T00:00:00.000Z"},
		{ThreadID: "thr_1", NodeID: "nod_1", Title: "Ship v1 in March", Confidence: &high, CreatedAt: "2026-01-01T00:00:00.000Z"}, // redelivered
	}
	for _, d := range decisions {
		ev := events.MustNew(events.TopicGraph, events.DecisionRecorded, objectID, hash, "req_test_decision", d)
		if err := prod.Publish(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	env.Eventually(t, func() bool {
		r := env.Do(t, "POST", base, key, nil).Expect(t, 200).JSON(t)
		return Num(t, r, "rebuilt_from_decisions") == 2
	}, "the rebuild finds the two major decisions")
	memory := Str(t, env.Do(t, "GET", base, key, nil).Expect(t, 200).JSON(t), "memory")
	if !strings.Contains(memory, "## Write it in Go") || !strings.Contains(memory, "## Ship v1 in March") ||
		strings.Contains(memory, "logo") || strings.Index(memory, "Write it in Go") > strings.Index(memory, "Ship v1") {
		t.Errorf("rebuilt memory (major decisions, newest first):\n%s", memory)
	}
}

func versionNumbers(list any) []int {
	var out []int
	for _, v := range list.([]any) {
		out = append(out, int(v.(map[string]any)["version"].(float64)))
	}
	return out
}

// TestContextRulesWrites: a rules write is a new version, seen at once by the object read and the
// rules read, and a moment later by mailbox-svc, which keeps its own projection of the admission
// rules (context-svc serves no rules to other services).
func TestContextRulesWrites(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, _ := env.CreateObject(t, nil)
	hash, key := env.CreateObject(t, map[string]any{"rules": map[string]any{"participant_admission": map[string]any{"mode": "owner_approval"}}})
	if got := MustJSON(env.Do(t, "GET", "/api/objects/"+hash+"/rules", "", nil).Expect(t, 200).JSON(t)); got != `{"participant_admission":{"mode":"owner_approval"}}` {
		t.Errorf("rules right after creation = %s", got)
	}
	admission := func() any {
		thread := Str(t, sendMessage(t, env, alice, hash, "", "may I?"), "thread_id")
		return env.Do(t, "GET", "/api/threads/"+thread, key, nil).Expect(t, 200).JSON(t)["participant_admission"]
	}

	w := env.Do(t, "PUT", "/api/objects/"+hash+"/rules", key, map[string]any{"body": `{"participant_admission":{"mode":"approval"}}`}).Expect(t, 200).JSON(t)
	if w["ok"] != true || Num(t, w, "version") != 2 || Num(t, env.Do(t, "GET", "/api/objects/"+hash, "", nil).JSON(t), "version") != 2 {
		t.Errorf("PUT rules = %v, want version 2 shown by the object read", w)
	}
	if got := MustJSON(env.Do(t, "GET", "/api/objects/"+hash+"/rules", "", nil).Expect(t, 200).JSON(t)); got != `{"participant_admission":{"mode":"approval"}}` {
		t.Errorf("rules after PUT rules = %s", got)
	}
	env.Eventually(t, func() bool { return admission() == "approval" }, "mailbox-svc applies the written admission mode")

	env.Do(t, "PUT", "/api/objects/"+hash+"/rules", key, map[string]any{"rules": nil}).Expect(t, 200)
	if got := string(env.Do(t, "GET", "/api/objects/"+hash+"/rules", "", nil).Expect(t, 200).Body); got != "{}" {
		t.Errorf("public rules after clearing them = %s, want {}", got)
	}
	env.Eventually(t, func() bool { return admission() == "open" }, "mailbox-svc applies the default once the rules are cleared")
}

// TestContextOwnerOnlyDataStaysPrivate plants markers in every kind of owner-only data and
// searches every public answer, with no key and with a stranger's key, and every context event.
func TestContextOwnerOnlyDataStaysPrivate(t *testing.T) {
	t.Parallel()
	env := Start(t, WithEnv(allowPrivate, "true"))
	hash, key := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Public face\n\nHello."})
	private, privateKey := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Private\n\nmarker-private-profile", "visibility": "private"})
	_, stranger := env.CreateObject(t, nil)
	markers := []string{"marker-private-profile", "marker-decision-memory", "marker-unlisted-source", "marker-old-version"}

	base := "/api/objects/" + hash
	env.Do(t, "PUT", base+"/llm.txt", key, map[string]any{"body": "# Public face\n\nmarker-old-version"}).Expect(t, 200)
	env.Do(t, "PUT", base+"/llm.txt", key, map[string]any{"body": "# Public face\n\nHello again."}).Expect(t, 200)
	env.Do(t, "PUT", base+"/decision-memory", key, map[string]any{"body": "marker-decision-memory"}).Expect(t, 200)
	env.Do(t, "POST", base+"/sources", key, map[string]any{"kind": "text", "title": "Unlisted", "text": "marker-unlisted-source", "included": false}).Expect(t, 201)
	listed := Str(t, env.Do(t, "POST", base+"/sources", key, map[string]any{"kind": "text", "title": "Listed", "text": "Public notes."}).Expect(t, 201).JSON(t), "id")
	linkID := Str(t, env.Do(t, "POST", base+"/context-links", key, map[string]any{"title": "Share", "source_ids": []string{listed}}).Expect(t, 201).JSON(t), "link_id")
	env.Do(t, "PUT", "/api/objects/"+private+"/decision-memory", privateKey, map[string]any{"body": "marker-decision-memory"}).Expect(t, 200)

	owner := env.Do(t, "GET", base+"/rules?show_blocked_list=1", key, nil).Expect(t, 200).JSON(t)
	if blocked, ok := owner["blocked_hashes"].([]any); !ok || len(blocked) != 0 {
		t.Errorf("the owner's rules read with show_blocked_list=1 = %v, want an empty blocked_hashes", owner)
	}
	var public []string
	for _, h := range []string{hash, private} {
		for _, route := range []string{"", "/llm.txt", "/context-coach.txt", "/agent-card.json", "/rules", "/rules?show_blocked_list=1"} {
			public = append(public, "/api/objects/"+h+route)
		}
	}
	public = append(public, "/api/context-links/"+linkID, "/context/"+linkID, "/api/directory")
	for _, path := range public {
		for _, k := range []string{"", stranger} {
			resp := env.Do(t, "GET", path, k, nil)
			if resp.Status != 200 && resp.Status != 404 {
				t.Errorf("GET %s: %d %s", path, resp.Status, resp.Body)
			}
			for _, m := range append(markers, "blocked_hashes") {
				if strings.Contains(string(resp.Body), m) {
					t.Errorf("GET %s (key %v) shows owner-only data %q", path, k != "", m)
				}
			}
		}
	}

	seen := contextEvents(t, env, func(evs []events.Event) bool {
		var updated, sources int
		for _, ev := range evs {
			switch ev.Type {
			case events.ContextUpdated:
				updated++
			case events.ContextSourceChanged:
				sources++
			}
		}
		// Two llm.txt writes and the listed source; the decision-memory writes publish nothing.
		return updated >= 3 && sources >= 2
	})
	for _, ev := range seen {
		var d struct{ Change string }
		if ev.Type == events.ContextUpdated && (ev.Decode(&d) != nil || d.Change == "decision_memory") {
			t.Errorf("a decision-memory write published %s %s", ev.Type, ev.Data)
		}
		raw, _ := json.Marshal(ev)
		for _, m := range markers {
			if strings.Contains(string(raw), m) {
				t.Errorf("event %s carries owner-only data %q", ev.Type, m)
			}
		}
	}
}

// contextEvents reads svc.context.v1 until done holds for what was read (or 20 seconds pass).
func contextEvents(t *testing.T, env *Env, done func([]events.Event) bool) []events.Event {
	t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: env.Brokers, GroupID: env.Name + ".e2e-reader", GroupTopics: []string{env.Name + "." + events.TopicContext},
		StartOffset: kafka.FirstOffset, MaxWait: 100 * time.Millisecond, HeartbeatInterval: 500 * time.Millisecond,
		SessionTimeout: 6 * time.Second, JoinGroupBackoff: 250 * time.Millisecond,
	})
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out []events.Event
	for !done(out) {
		msg, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("reading context events (got %d): %v", len(out), err)
		}
		var ev events.Event
		if err := json.Unmarshal(msg.Value, &ev); err != nil {
			t.Fatalf("context event is not an envelope: %s", msg.Value)
		}
		out = append(out, ev)
	}
	return out
}

// TestContextBadInput: every bad input is a 4xx in the error shape.
func TestContextBadInput(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, nil)
	_, otherKey := env.CreateObject(t, nil)
	base := "/api/objects/" + hash
	src := Str(t, env.Do(t, "POST", base+"/sources", key, map[string]any{"kind": "text", "text": "notes"}).Expect(t, 201).JSON(t), "id")
	big := strings.Repeat("a", 256<<10+1)
	cases := []struct {
		name, method, path, key string
		body                    any
		status                  int
		code                    string
	}{
		{"write without key", "PUT", base + "/llm.txt", "", map[string]any{"body": "x"}, 401, "UNAUTHORIZED"},
		{"write with another key", "PUT", base + "/llm.txt", otherKey, map[string]any{"body": "x"}, 403, "FORBIDDEN"},
		{"context read with another key", "GET", base + "/context", otherKey, nil, 403, "FORBIDDEN"},
		{"unknown object", "GET", "/api/objects/svc_nosuchobject/llm.txt", "", nil, 404, "NOT_FOUND"},
		{"llm.txt without body", "PUT", base + "/llm.txt", key, map[string]any{}, 400, "MISSING_FIELD"},
		{"llm.txt unknown field", "PUT", base + "/llm.txt", key, map[string]any{"body": "x", "title": "y"}, 400, "UNKNOWN_FIELD"},
		{"llm.txt wrong type", "PUT", base + "/llm.txt", key, map[string]any{"body": 5}, 400, "INVALID_REQUEST"},
		{"llm.txt too large", "PUT", base + "/llm.txt", key, map[string]any{"body": big}, 413, "PAYLOAD_TOO_LARGE"},
		{"llm.txt malformed", "PUT", base + "/llm.txt", key, `{"body":`, 400, "INVALID_JSON"},
		{"context without llm_txt", "PUT", base + "/context", key, map[string]any{"rules": nil}, 400, "MISSING_FIELD"},
		{"context too large", "PUT", base + "/context", key, map[string]any{"llm_txt": big}, 413, "PAYLOAD_TOO_LARGE"},
		{"context bad rules", "PUT", base + "/context", key, map[string]any{"llm_txt": "x", "rules": map[string]any{"read": map[string]any{"nope": "x"}}}, 400, "INVALID_REQUEST"},
		{"context leaves out the profile", "PUT", base + "/context", key, map[string]any{"llm_txt": "x", "sections": []any{map[string]any{"id": "profile", "included": false}}}, 400, "INVALID_REQUEST"},
		{"context unknown section", "PUT", base + "/context", key, map[string]any{"llm_txt": "x", "sections": []any{map[string]any{"id": "src_nope", "included": true}}}, 400, "INVALID_REQUEST"},
		{"context section twice", "PUT", base + "/context", key, map[string]any{"llm_txt": "x", "sections": []any{map[string]any{"id": src, "included": true}, map[string]any{"id": src, "included": false}}}, 400, "INVALID_REQUEST"},
		{"context section without included", "PUT", base + "/context", key, map[string]any{"llm_txt": "x", "sections": []any{map[string]any{"id": src}}}, 400, "MISSING_FIELD"},
		{"version zero", "GET", base + "/versions?version=0", key, nil, 400, "INVALID_REQUEST"},
		{"version not a number", "GET", base + "/versions?version=two", key, nil, 400, "INVALID_REQUEST"},
		{"versions bad limit", "GET", base + "/versions?limit=201", key, nil, 400, "INVALID_REQUEST"},
		{"versions bad cursor", "GET", base + "/versions?cursor=!!", key, nil, 400, "INVALID_REQUEST"},
		{"rules bad flag", "GET", base + "/rules?show_blocked_list=yes", "", nil, 400, "INVALID_REQUEST"},
		{"rules without body", "PUT", base + "/rules", key, map[string]any{}, 400, "MISSING_FIELD"},
		{"rules body and rules", "PUT", base + "/rules", key, map[string]any{"body": "{}", "rules": map[string]any{}}, 400, "INVALID_REQUEST"},
		{"rules body not JSON", "PUT", base + "/rules", key, map[string]any{"body": "read: all"}, 400, "INVALID_REQUEST"},
		{"rules bad leaf", "PUT", base + "/rules", key, map[string]any{"rules": map[string]any{"write": map[string]any{"mailbox": "Anyone At All"}}}, 400, "INVALID_REQUEST"},
		{"source without kind", "POST", base + "/sources", key, map[string]any{"url": "https://example.com"}, 400, "MISSING_FIELD"},
		{"source bad kind", "POST", base + "/sources", key, map[string]any{"kind": "ftp", "url": "https://example.com"}, 400, "INVALID_KIND"},
		{"url source without url", "POST", base + "/sources", key, map[string]any{"kind": "social"}, 400, "MISSING_FIELD"},
		{"url source with text", "POST", base + "/sources", key, map[string]any{"kind": "url", "url": "https://example.com", "text": "x"}, 400, "INVALID_REQUEST"},
		{"url source bad url", "POST", base + "/sources", key, map[string]any{"kind": "code_host", "url": "not a url"}, 400, "INVALID_URL"},
		{"url source too long", "POST", base + "/sources", key, map[string]any{"kind": "url", "url": "https://example.com/" + strings.Repeat("a", 2048)}, 400, "INVALID_URL"},
		{"text source without text", "POST", base + "/sources", key, map[string]any{"kind": "text"}, 400, "MISSING_FIELD"},
		{"text source with url", "POST", base + "/sources", key, map[string]any{"kind": "text", "text": "x", "url": "https://example.com"}, 400, "INVALID_REQUEST"},
		{"text source too large", "POST", base + "/sources", key, map[string]any{"kind": "text", "text": big}, 413, "PAYLOAD_TOO_LARGE"},
		{"source title too long", "POST", base + "/sources", key, map[string]any{"kind": "text", "text": "x", "title": strings.Repeat("t", 201)}, 400, "INVALID_REQUEST"},
		{"sources bad cursor", "GET", base + "/sources?cursor=" + "bm9wZQ", key, nil, 400, "INVALID_REQUEST"},
		{"link without title", "POST", base + "/context-links", key, map[string]any{"source_ids": []string{src}}, 400, "MISSING_FIELD"},
		{"link without sources", "POST", base + "/context-links", key, map[string]any{"title": "x", "source_ids": []string{}}, 400, "MISSING_FIELD"},
		{"link unknown source", "POST", base + "/context-links", key, map[string]any{"title": "x", "source_ids": []string{"src_nope"}}, 400, "INVALID_REQUEST"},
		{"link source twice", "POST", base + "/context-links", key, map[string]any{"title": "x", "source_ids": []string{src, src}}, 400, "INVALID_REQUEST"},
		{"link note too long", "POST", base + "/context-links", key, map[string]any{"title": "x", "note": strings.Repeat("n", 2001), "source_ids": []string{src}}, 400, "INVALID_REQUEST"},
		{"link of another object", "POST", base + "/context-links", otherKey, map[string]any{"title": "x", "source_ids": []string{src}}, 403, "FORBIDDEN"},
		{"sync without repo", "PUT", base + "/sync", key, map[string]any{"branch": "main"}, 400, "MISSING_FIELD"},
		{"sync bad branch", "PUT", base + "/sync", key, map[string]any{"repo_url": "https://example.com/r.git", "branch": "a..b"}, 400, "INVALID_REQUEST"},
		{"sync path outside", "PUT", base + "/sync", key, map[string]any{"repo_url": "https://example.com/r.git", "file_path": "../etc/passwd"}, 400, "INVALID_REQUEST"},
		{"sync absolute path", "PUT", base + "/sync", key, map[string]any{"repo_url": "https://example.com/r.git", "file_path": "/etc/passwd"}, 400, "INVALID_REQUEST"},
		{"sync pull with a body", "POST", base + "/sync", key, map[string]any{"force": true}, 400, "UNKNOWN_FIELD"},
		{"memory without body", "PUT", base + "/decision-memory", key, map[string]any{}, 400, "MISSING_FIELD"},
		{"memory too large", "PUT", base + "/decision-memory", key, map[string]any{"body": big}, 413, "PAYLOAD_TOO_LARGE"},
		{"rebuild with a body", "POST", base + "/decision-memory", key, map[string]any{"limit": 3}, 400, "UNKNOWN_FIELD"},
		{"memory of another object", "GET", base + "/decision-memory", otherKey, nil, 403, "FORBIDDEN"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env.Do(t, c.method, c.path, c.key, c.body).ExpectError(t, c.status, c.code)
		})
	}
	exact := strings.Repeat("a", 256<<10)
	env.Do(t, "PUT", base+"/llm.txt", key, map[string]any{"body": exact}).Expect(t, 200)
	if v := Num(t, env.Do(t, "GET", "/api/objects/"+hash, "", nil).JSON(t), "version"); v != 3 {
		t.Errorf("after the source, the refused writes and one good write the version is %v, want 3", v)
	}
}
