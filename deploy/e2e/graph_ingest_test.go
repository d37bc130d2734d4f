package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

const articlePage = `<!doctype html><html><head><title>Parsers we trust</title>
<style>body { color: red }</style><script>var tracking = "SCRIPT-CONTENT";</script></head>
<body><nav><a href="/">Home</a> <a href="/about">About</a></nav>
<article><h1>Parsers we trust</h1>
<p>A hand-written recursive descent parser is easy to change and gives the best error messages.
Most production compilers, from Go to Clang, are written this way for that reason.</p>
<p>Generated parsers are quicker to start with but harder to debug when the grammar grows, and
their error messages rarely say what the author of the input meant to write.</p>
<p>We keep the grammar small, test every production, and measure the parser on real inputs.</p>
</article><footer>Copyright</footer></body></html>`

// ingestEnv starts a suite whose graph-svc may fetch p's pages (loopback, its private CA).
func ingestEnv(t *testing.T, p *pages, opts ...Option) *Env {
	t.Helper()
	return Start(t, append([]Option{WithEnv(allowPrivate, "true"), WithEnv("OUTBOUND_CA_FILE", p.CAFile)}, opts...)...)
}

// sourceByURL returns the source of an ingest answer or a listing that has url.
func sourceByURL(t *testing.T, list any, url string) map[string]any {
	t.Helper()
	for _, s := range list.([]any) {
		if m := s.(map[string]any); m["url"] == url {
			return m
		}
	}
	t.Fatalf("no source for %s in %v", url, list)
	return nil
}

// TestIngestPagesIntoSources: pages are fetched through the outbound guard into readable text;
// each URL is a tracked source whose status, linked node and last error say what its pulls saw.
func TestIngestPagesIntoSources(t *testing.T) {
	t.Parallel()
	p := startPages(t)
	env := ingestEnv(t, p)
	watch := watchTopics(t, env.Brokers, env.Name, events.TopicGraph)
	hash, key := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Ada\n\nBuilds parsers."})
	p.set("/article", articlePage)
	p.set("/redirect", "redirect:http://169.254.169.254/latest/meta-data/")
	p.set("/big", "<html><body><p>"+strings.Repeat("big page ", 5<<20/9)+"</p></body></html>")
	article, redirect, big := p.URL+"/article", p.URL+"/redirect", p.URL+"/big"

	res := env.Do(t, "POST", "/api/ingest", key, map[string]any{
		"urls": []string{article, redirect, big}, "text": "Notes from the parser meeting.",
	}).Expect(t, http.StatusCreated).JSON(t)
	threadID := Str(t, res, "thread_id")
	if !strings.HasPrefix(threadID, "ths_") {
		t.Fatalf("ingest went to thread %s, want the self-ingest thread", threadID)
	}
	src := sourceByURL(t, res["sources"], article)
	if src["status"] != "ok" || src["kind"] != "url" || src["node_id"] == nil || src["last_error"] != nil || src["visibility"] != "participants" {
		t.Fatalf("the article's source %v", src)
	}
	var text string
	var kinds []string
	for _, n := range res["nodes"].([]any) {
		n := n.(map[string]any)
		kinds = append(kinds, n["type"].(string))
		if n["id"] == src["node_id"] {
			text = n["body"].(string)
			if n["source_id"] != src["id"] || n["type"] != "evidence" {
				t.Errorf("the article's node %v", n)
			}
		}
	}
	if !containsAll(text, "recursive descent parser is easy to change", "harder to debug", "measure the parser") ||
		strings.Contains(text, "SCRIPT-CONTENT") || strings.Contains(text, "color: red") || strings.Contains(text, "<p>") {
		t.Errorf("the article's readable text:\n%s", text)
	}
	if MustJSON(kinds) != `["context_dump","evidence"]` {
		t.Errorf("ingest wrote nodes %v, want the text and the article", kinds)
	}
	if s := sourceByURL(t, res["sources"], redirect); s["status"] != "error" || !strings.Contains(Str(t, s, "last_error"), "private or local network address") || s["node_id"] != nil {
		t.Errorf("a redirect to the metadata address: %v", s)
	}
	if s := sourceByURL(t, res["sources"], big); s["status"] != "error" || !strings.Contains(Str(t, s, "last_error"), "larger than 2097152 bytes") {
		t.Errorf("a 5 MiB page: %v", s)
	}

	// The page changes: an on-demand pull reads it into a new node derived from the old one.
	p.set("/article", strings.Replace(articlePage, "We keep the grammar small", "We rewrote the grammar", 1))
	pull := "/api/threads/" + threadID + "/sources/" + Str(t, src, "id") + "/pull"
	changed := env.Do(t, "POST", pull, key, nil).Expect(t, 200).JSON(t)
	if changed["status"] != "ok" || changed["node_id"] == src["node_id"] || changed["last_pulled_at"] == src["last_pulled_at"] {
		t.Fatalf("pull of a changed page %v, want a new node", changed)
	}
	nodes, edges := graphOf(t, env, key, threadID, "")
	if n := byID(nodes, Str(t, changed, "node_id")); n == nil || !strings.Contains(Str(t, n, "body"), "We rewrote the grammar") {
		t.Errorf("the new node %v", n)
	}
	if byID(nodes, Str(t, src, "node_id")) == nil || len(edges) != 1 || edges[0]["type"] != "derived_from" ||
		edges[0]["from_node_id"] != changed["node_id"] || edges[0]["to_node_id"] != src["node_id"] {
		t.Errorf("the old node is kept with a derived_from edge from the new one: %v", edges)
	}
	var ev contract.ThreadSourceChangedData
	watch.wait(t, env, events.ContextSourceChanged, &ev, func() bool { return ev.Change == "changed" && ev.SourceID == src["id"] })
	if ev.NodeID != changed["node_id"] || ev.URL != article || ev.ThreadID != threadID {
		t.Errorf("context_source event %+v", ev)
	}
	// Unchanged, the next pull keeps the node.
	if same := env.Do(t, "POST", pull, key, nil).Expect(t, 200).JSON(t); same["node_id"] != changed["node_id"] || same["status"] != "ok" {
		t.Errorf("pull of an unchanged page %v", same)
	}

	// The site goes down: the source shows the error and keeps its node.
	p.down.Store(true)
	failing := env.Do(t, "POST", pull, key, nil).Expect(t, 200).JSON(t)
	if failing["status"] != "error" || !strings.Contains(Str(t, failing, "last_error"), "HTTP 503") || failing["node_id"] != changed["node_id"] {
		t.Errorf("pull of a failing page %v", failing)
	}
	p.down.Store(false)
	listed := env.Do(t, "GET", "/api/threads/"+threadID+"/sources", key, nil).Expect(t, 200).JSON(t)
	if s := sourceByURL(t, listed["sources"], article); s["status"] != "error" || s["last_error"] != failing["last_error"] || len(listed["sources"].([]any)) != 3 {
		t.Errorf("sources listing %v", listed)
	}

	// The self-thread ingest adds to the same thread.
	self := env.Do(t, "POST", "/api/ingest/self", key, map[string]any{
		"message_body": "Reading list for the parser work.", "text": "Grammar sketch", "visibility": "owner_only",
	}).Expect(t, 201).JSON(t)
	if self["thread_id"] != threadID || len(self["nodes"].([]any)) != 2 || len(self["sources"].([]any)) != 0 {
		t.Errorf("self ingest %v", self)
	}

	overview := env.Do(t, "GET", "/api/ingest?include_graph=1", key, nil).Expect(t, 200).JSON(t)
	st := overview["self_thread"].(map[string]any)
	ctx := overview["context"].(map[string]any)
	if overview["hash"] != hash || st["thread_id"] != threadID || Num(t, st, "source_count") != 3 || Num(t, st, "node_count") != 5 ||
		ctx["title"] != "Ada" || len(overview["sources"].([]any)) != 3 || len(overview["graph_previews"].([]any)) != 1 {
		t.Errorf("ingest overview %v", overview)
	}
	if plain := env.Do(t, "GET", "/api/ingest", key, nil).Expect(t, 200).JSON(t); plain["graph_previews"] != nil {
		t.Errorf("the overview without include_graph has previews: %v", plain["graph_previews"])
	}

	// No one else reaches the self-ingest thread or its sources.
	_, otherKey := env.CreateObject(t, nil)
	env.Do(t, "GET", "/api/threads/"+threadID+"/sources", otherKey, nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "POST", pull, otherKey, nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "GET", "/api/threads/"+threadID+"/graph", otherKey, nil).ExpectError(t, 404, "NOT_FOUND")
	if o := env.Do(t, "GET", "/api/ingest", otherKey, nil).Expect(t, 200).JSON(t); o["self_thread"] != nil || len(o["sources"].([]any)) != 0 {
		t.Errorf("another object's overview %v", o)
	}
}

// TestIngestBadInput: bad URLs and bodies are 4xx and write nothing; sub-keys need the mailbox scope.
func TestIngestBadInput(t *testing.T) {
	t.Parallel()
	p := startPages(t)
	env := ingestEnv(t, p)
	hash, key := env.CreateObject(t, nil)
	for _, c := range []struct {
		body   map[string]any
		status int
		code   string
	}{
		{map[string]any{}, 400, "INVALID_REQUEST"},
		{map[string]any{"urls": []string{"ftp://example.com/file"}}, 400, "INVALID_URL"},
		{map[string]any{"urls": []string{"not a url"}}, 400, "INVALID_URL"},
		{map[string]any{"urls": []string{"https://169.254.169.254/latest/meta-data/"}}, 400, "INVALID_URL"},
		{map[string]any{"urls": []string{"https://user:pw@example.com/"}}, 400, "INVALID_URL"},
		{map[string]any{"cloud_drive_urls": []string{"https://example.com/file.pdf"}}, 400, "INVALID_URL"},
		{map[string]any{"text": "x", "visibility": "everyone"}, 400, "INVALID_VISIBILITY"},
		{map[string]any{"urls": make([]string, 21)}, 400, "INVALID_REQUEST"},
		{map[string]any{"text": strings.Repeat("x", 300<<10)}, 413, "PAYLOAD_TOO_LARGE"},
		{map[string]any{"text": "x", "title": "y"}, 400, "UNKNOWN_FIELD"},
	} {
		if r := env.Do(t, "POST", "/api/ingest", key, c.body); r.Status != c.status || r.ErrorCode(t) != c.code {
			t.Errorf("ingest %.120v = %d %s, want %d %s", c.body, r.Status, r.Body, c.status, c.code)
		}
	}
	env.Do(t, "GET", "/api/ingest?include_graph=yes", key, nil).ExpectError(t, 400, "INVALID_REQUEST")
	if o := env.Do(t, "GET", "/api/ingest", key, nil).Expect(t, 200).JSON(t); o["self_thread"] != nil || len(o["sources"].([]any)) != 0 {
		t.Errorf("refused ingests wrote something: %v", o)
	}
	sub := Str(t, env.Do(t, "POST", "/api/objects/"+hash+"/keys", key, map[string]any{"scopes": []string{"read", "write"}}).Expect(t, 201).JSON(t), "key")
	env.Do(t, "POST", "/api/ingest", sub, map[string]any{"text": "x"}).ExpectError(t, 403, "INSUFFICIENT_SCOPE")
	env.Do(t, "GET", "/api/ingest", sub, nil).ExpectError(t, 403, "INSUFFICIENT_SCOPE")
	if n := p.hits.Load(); n != 0 {
		t.Errorf("refused ingests fetched %d times", n)
	}
}

// TestIngestScheduledRepull: tracked sources are pulled again on a schedule; a change becomes a
// new node without anyone asking.
func TestIngestScheduledRepull(t *testing.T) {
	t.Parallel()
	p := startPages(t)
	env := ingestEnv(t, p, WithEnv("GRAPH_PULL_INTERVAL", "1s"), WithEnv("GRAPH_PULL_SCAN", "200ms"))
	_, key := env.CreateObject(t, nil)
	p.set("/notes", articlePage)
	res := env.Do(t, "POST", "/api/ingest", key, map[string]any{"urls": []string{p.URL + "/notes"}}).Expect(t, 201).JSON(t)
	first := sourceByURL(t, res["sources"], p.URL+"/notes")
	p.set("/notes", strings.Replace(articlePage, "We keep the grammar small", "Scheduled pulls saw this", 1))
	threadID := Str(t, res, "thread_id")
	env.Eventually(t, func() bool {
		s := sourceByURL(t, env.Do(t, "GET", "/api/threads/"+threadID+"/sources", key, nil).Expect(t, 200).JSON(t)["sources"], p.URL+"/notes")
		return s["node_id"] != first["node_id"] && s["status"] == "ok"
	}, "the scheduled pull reads the changed page")
	nodes, _ := graphOf(t, env, key, threadID, "")
	if len(nodes) != 2 || !strings.Contains(Str(t, nodes[1], "body"), "Scheduled pulls saw this") {
		t.Errorf("nodes after the scheduled pull: %v", nodes)
	}
}

// TestSlowIngestAnswersWhatItWrote: an ingest whose pages answer slower than its budget still
// answers inside the gateway's timeout, 201 with every source it wrote (the slow pages' pulls
// timed out, said on their sources), never a 503 for a write that happened; the owner's listing
// holds exactly the sources the answer named.
func TestSlowIngestAnswersWhatItWrote(t *testing.T) {
	t.Parallel()
	p := startPages(t)
	env := ingestEnv(t, p, WithEnv("GRAPH_INGEST_BUDGET", "2s"))
	_, key := env.CreateObject(t, nil)
	p.set("/article", articlePage)
	// Four pages that never answer: fetched one after the other, each until the fetcher's own
	// timeout, they would take longer than the gateway waits.
	urls := []string{p.URL + "/article"}
	for i := range 4 {
		p.set(fmt.Sprintf("/slow%d", i), "slow")
		urls = append(urls, fmt.Sprintf("%s/slow%d", p.URL, i))
	}
	article := urls[0]

	resp := env.Do(t, "POST", "/api/ingest", key, map[string]any{"urls": urls, "text": "Notes."})
	if resp.Status != http.StatusCreated {
		t.Fatalf("a slow ingest answered %d, want 201 with what it wrote: %s", resp.Status, resp.Body)
	}
	res := resp.JSON(t)
	if src := sourceByURL(t, res["sources"], article); src["status"] != "ok" || src["node_id"] == nil {
		t.Errorf("the fast page's source %v", src)
	}
	answered := map[string]bool{}
	for _, u := range urls {
		src := sourceByURL(t, res["sources"], u)
		answered[Str(t, src, "id")] = true
		if u == article {
			continue
		}
		if msg, _ := src["last_error"].(string); src["status"] != "error" || !(strings.Contains(msg, "timed out") || strings.Contains(msg, "time ran out")) {
			t.Errorf("the slow page's source %v, want an error saying the fetch ran out of time", src)
		}
	}
	listed := env.Do(t, "GET", "/api/ingest", key, nil).Expect(t, http.StatusOK).JSON(t)
	sources, _ := listed["sources"].([]any)
	if len(sources) != len(answered) {
		t.Fatalf("the owner's listing holds %d sources, the ingest answered %d: %v", len(sources), len(answered), sources)
	}
	for _, s := range sources {
		if id := s.(map[string]any)["id"].(string); !answered[id] {
			t.Errorf("the listing holds source %s, which the ingest did not answer", id)
		}
	}
}
