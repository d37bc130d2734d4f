package e2e

import (
	"encoding/base64"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/svcdev/svc/pkg/httpx"
)

// pageAll reads every page of an owner list through the gateway with limit, following
// next_cursor, and returns the field of each entry of the list named list, in order.
func pageAll(t *testing.T, env *Env, path, key, list, field string, limit int) []string {
	t.Helper()
	var out []string
	for cursor, pages := "", 0; ; pages++ {
		if pages > 200 {
			t.Fatalf("%s: more than 200 pages", path)
		}
		page := env.Do(t, "GET", fmt.Sprintf("%s?limit=%d%s", path, limit, cursor), key, nil).Expect(t, 200).JSON(t)
		for _, e := range page[list].([]any) {
			out = append(out, fmt.Sprint(e.(map[string]any)[field]))
		}
		if page["next_cursor"] == nil {
			return out
		}
		cursor = "&cursor=" + Str(t, page, "next_cursor")
	}
}

// forgedCursors are cursors a client could make up: a bare position (what the lists took
// before), a position with a wrong check, and text that is not base64.
func forgedCursors() []string {
	enc := base64.RawURLEncoding.EncodeToString
	return []string{enc([]byte("3")), enc([]byte("3.AAAAAAAAAAA")), enc([]byte("src_x")), "%%%"}
}

// TestContextSourcesPageAndKeepTheirLimit: an object's sources page oldest first; a forged cursor
// and another object's cursor are 400; with five places left of 100, 32 concurrent creates
// through two replicas get five 201s and the rest 409, and the object holds exactly 100; a
// delete frees one place (the next create is 201, the one after 409) and drops the source from
// the list and from the public profile.
func TestContextSourcesPageAndKeepTheirLimit(t *testing.T) {
	t.Parallel()
	env := Start(t, WithReplicas("context-svc", 2))
	hash, key := env.CreateObject(t, nil)
	other, otherKey := env.CreateObject(t, nil)
	base := "/api/objects/" + hash
	const left, creators = 5, 32
	var created []string
	for i := range 100 - left {
		note := map[string]any{"kind": "text", "text": fmt.Sprintf("note %d", i), "included": i == 0}
		created = append(created, Str(t, env.Do(t, "POST", base+"/sources", key, note).Expect(t, 201).JSON(t), "id"))
	}
	if got := pageAll(t, env, base+"/sources", key, "sources", "id", 7); !slices.Equal(got, created) {
		t.Fatalf("sources in pages of 7: got %d (%v…), want the %d created, oldest first", len(got), got[:min(3, len(got))], len(created))
	}
	for _, c := range forgedCursors() {
		env.Do(t, "GET", base+"/sources?cursor="+c, key, nil).ExpectError(t, 400, "INVALID_REQUEST")
	}
	env.Do(t, "POST", "/api/objects/"+other+"/sources", otherKey, map[string]any{"kind": "text", "text": "x"}).Expect(t, 201)
	env.Do(t, "POST", "/api/objects/"+other+"/sources", otherKey, map[string]any{"kind": "text", "text": "y"}).Expect(t, 201)
	foreign := env.Do(t, "GET", "/api/objects/"+other+"/sources?limit=1", otherKey, nil).Expect(t, 200).JSON(t)
	env.Do(t, "GET", base+"/sources?cursor="+Str(t, foreign, "next_cursor"), key, nil).ExpectError(t, 400, "INVALID_REQUEST")

	statuses := make(chan int, creators)
	var wg sync.WaitGroup
	for i := range creators {
		wg.Go(func() {
			note := map[string]any{"kind": "text", "text": fmt.Sprintf("racer %d", i), "included": false}
			statuses <- env.send(t, Request{Method: "POST", Path: base + "/sources", Key: key, Body: note}).Status
		})
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	all := pageAll(t, env, base+"/sources", key, "sources", "id", 200)
	if count[201] != left || count[409] != creators-left || len(all) != 100 {
		t.Fatalf("%d concurrent creates with %d places left: statuses %v, %d sources stored; want %d 201s, %d 409s, 100 stored",
			creators, left, count, len(all), left, creators-left)
	}

	before := Num(t, env.Do(t, "GET", "/api/objects/"+hash, "", nil).Expect(t, 200).JSON(t), "version")
	gone := created[0] // the included one
	del := env.Do(t, "DELETE", base+"/sources/"+gone, key, nil).Expect(t, 200).JSON(t)
	if Num(t, del, "version") != before+1 {
		t.Errorf("delete answered version %v, want %v", del["version"], before+1)
	}
	env.Do(t, "DELETE", base+"/sources/"+gone, key, nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "DELETE", base+"/sources/"+created[1], otherKey, nil).Expect(t, 403)
	env.Do(t, "DELETE", "/api/objects/"+other+"/sources/"+created[1], otherKey, nil).ExpectError(t, 404, "NOT_FOUND")
	note := map[string]any{"kind": "text", "text": "after the delete", "included": false}
	env.Do(t, "POST", base+"/sources", key, note).Expect(t, 201)
	env.Do(t, "POST", base+"/sources", key, note).ExpectError(t, 409, "CONFLICT")
	after := pageAll(t, env, base+"/sources", key, "sources", "id", 50)
	if len(after) != 100 || slices.Contains(after, gone) {
		t.Fatalf("after a delete and a create: %d sources, deleted one listed: %v; want 100 without it", len(after), slices.Contains(after, gone))
	}
	ctx := env.Do(t, "GET", base+"/context", key, nil).Expect(t, 200).JSON(t)
	if n := len(ctx["sections"].([]any)); n != 101 {
		t.Errorf("structured context has %d sections, want the profile and 100 sources", n)
	}
	version := env.Do(t, "GET", base+"/versions?version="+fmt.Sprint(before+1), key, nil).Expect(t, 200).JSON(t)
	if ids := version["source_ids"].([]any); slices.Contains(ids, any(gone)) {
		t.Errorf("the version after the delete still includes %s: %v", gone, ids)
	}
}

// TestContextVersionsLinksAndMemoryPage: versions page newest first down to the first, links
// newest first, and decision memory's versions, each through next_cursor; forged cursors and
// another object's are 400.
func TestContextVersionsLinksAndMemoryPage(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Pages\n"})
	other, otherKey := env.CreateObject(t, nil)
	base := "/api/objects/" + hash
	for i := range 6 {
		env.Do(t, "PUT", base+"/llm.txt", key, map[string]any{"body": fmt.Sprintf("# Pages\n\nedit %d\n", i)}).Expect(t, 200)
	}
	if got := pageAll(t, env, base+"/versions", key, "versions", "version", 2); !slices.Equal(got, []string{"7", "6", "5", "4", "3", "2", "1"}) {
		t.Fatalf("versions in pages of 2: %v, want 7 down to 1", got)
	}
	src := Str(t, env.Do(t, "POST", base+"/sources", key, map[string]any{"kind": "text", "text": "shared"}).Expect(t, 201).JSON(t), "id")
	var links []string
	for i := range 5 {
		l := env.Do(t, "POST", base+"/context-links", key, map[string]any{"title": fmt.Sprintf("link %d", i), "source_ids": []string{src}}).Expect(t, 201).JSON(t)
		links = append([]string{Str(t, l, "link_id")}, links...)
	}
	if got := pageAll(t, env, base+"/context-links", key, "links", "link_id", 2); !slices.Equal(got, links) {
		t.Fatalf("links in pages of 2: %v, want %v (newest first)", got, links)
	}
	for i := range 3 {
		env.Do(t, "PUT", base+"/decision-memory", key, map[string]any{"body": fmt.Sprintf("memory %d", i)}).Expect(t, 200)
	}
	if got := pageAll(t, env, base+"/decision-memory", key, "versions", "version", 2); !slices.Equal(got, []string{"3", "2", "1"}) {
		t.Fatalf("decision-memory versions in pages of 2: %v, want 3, 2, 1", got)
	}
	env.Do(t, "PUT", "/api/objects/"+other+"/llm.txt", otherKey, map[string]any{"body": "# Other\n"}).Expect(t, 200)
	foreign := env.Do(t, "GET", "/api/objects/"+other+"/versions?limit=1", otherKey, nil).Expect(t, 200).JSON(t)
	for _, route := range []string{"/versions", "/context-links", "/decision-memory"} {
		for _, c := range append(forgedCursors(), Str(t, foreign, "next_cursor")) {
			env.Do(t, "GET", base+route+"?cursor="+c, key, nil).ExpectError(t, 400, "INVALID_REQUEST")
		}
	}
}

// TestContextListCommandBudget: a page of each of the owner's context lists, and a source create,
// send a bounded number of store commands, counted by request id (TestStoreCommandBudget's
// counter): each list one find of its range (and one of the documents it names), never a scan.
func TestContextListCommandBudget(t *testing.T) {
	t.Parallel()
	counter := newCommandCounter()
	env := Start(t, WithCommandMonitor(counter.monitor()))
	hash, key := env.CreateObject(t, nil)
	base := "/api/objects/" + hash
	for i := range 4 {
		env.Do(t, "POST", base+"/sources", key, map[string]any{"kind": "text", "text": fmt.Sprint("n", i), "included": false}).Expect(t, 201)
	}
	src := pageAll(t, env, base+"/sources", key, "sources", "id", 10)[0]
	env.Do(t, "POST", base+"/context-links", key, map[string]any{"title": "l", "source_ids": []string{src}}).Expect(t, 201)
	cases := []struct {
		name, method, path string
		body               any
		want, budget       int
	}{
		// The owner's key and hash come from caches. context-svc: the object's range of sources
		// (bounded by the limit) to pick the slot, the slot insert, the range entry, the
		// source_changed event staged in the outbox, the source insert.
		{"source create", "POST", base + "/sources", map[string]any{"kind": "text", "text": "x", "included": false}, 201, 5},
		// The profile (its head, its version and the probe past it), the range, the sources it
		// names: 3 + 1 + 1, whatever the page holds.
		{"sources page", "GET", base + "/sources", nil, 200, 5},
		// The profile (three), then one find of the versions listed.
		{"versions page", "GET", base + "/versions", nil, 200, 4},
		// The range of links (each entry a copy of the link).
		{"links page", "GET", base + "/context-links", nil, 200, 1},
	}
	for i, c := range cases {
		rid := fmt.Sprintf("ctxbudget-%02d", i)
		env.Send(t, Request{Method: c.method, Path: c.path, Key: key, Body: c.body, Headers: map[string]string{httpx.HeaderRequestID: rid}}).Expect(t, c.want)
		cmds := counter.of(rid)
		t.Logf("%-14s %2d (budget %2d): %v", c.name, len(cmds), c.budget, cmds)
		if len(cmds) > c.budget || len(cmds) == 0 {
			t.Errorf("%s: %d store commands, budget %d: %v", c.name, len(cmds), c.budget, cmds)
		}
	}
}
