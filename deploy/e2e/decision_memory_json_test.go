package e2e

import (
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestDecisionMemoryJSONAndIfMatch: a decision carries world time on its node; format=json
// lists the current decision with its world time and what it superseded, and the superseded one
// apart, and the markdown a rebuild writes says the same; a write with a stale If-Match is 412
// and changes nothing, one with the current version succeeds, and of concurrent writers holding
// one version exactly one wins.
func TestDecisionMemoryJSONAndIfMatch(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, aliceKey, _, bobKey, threadID := thread(t, env)
	base := "/api/threads/" + threadID
	friday := Str(t, env.Do(t, "POST", base+"/decision", aliceKey, map[string]any{
		"title": "Ship on Friday", "body": "We ship on Friday.", "confidence": 0.9,
	}).Expect(t, 201).JSON(t), "id")
	node := env.Do(t, "POST", base+"/decision", bobKey, map[string]any{
		"title": "Ship on Monday", "body": "We ship on Monday.", "supersedes_node_ids": []string{friday},
		"valid_from": "2027-03-01T00:00:00Z", "valid_until": "2027-04-01T00:00:00Z",
	}).Expect(t, 201).JSON(t)
	monday := Str(t, node, "id")
	if node["valid_from"] != "2027-03-01T00:00:00.000Z" || node["valid_until"] != "2027-04-01T00:00:00.000Z" {
		t.Errorf("decision node's world time %v", node)
	}
	env.Do(t, "POST", base+"/decision", bobKey, map[string]any{"title": "t", "body": "b", "valid_from": "Monday"}).
		ExpectError(t, 400, "INVALID_REQUEST")
	env.Do(t, "POST", base+"/decision", bobKey, map[string]any{"title": "t", "body": "b",
		"valid_from": "2027-04-01T00:00:00Z", "valid_until": "2027-03-01T00:00:00Z"}).ExpectError(t, 400, "INVALID_REQUEST")

	path := "/api/objects/" + alice + "/decision-memory"
	var mem map[string]any
	env.Eventually(t, func() bool {
		mem = env.Do(t, "GET", path+"?format=json", aliceKey, nil).Expect(t, 200).JSON(t)
		return len(mem["superseded"].([]any)) == 1
	}, "both decisions in alice's structured decision memory")
	ds := mem["decisions"].([]any)
	if len(ds) != 1 {
		t.Fatalf("current decisions %v, want monday only", ds)
	}
	d := ds[0].(map[string]any)
	if d["id"] != monday || d["title"] != "Ship on Monday" || d["body"] != "We ship on Monday." || d["confidence"] != nil ||
		d["thread_id"] != threadID || d["valid_from"] != "2027-03-01T00:00:00.000Z" || d["valid_until"] != "2027-04-01T00:00:00.000Z" ||
		MustJSON(d["supersedes"]) != MustJSON([]map[string]any{{"id": friday, "title": "Ship on Friday"}}) {
		t.Errorf("current decision %v", d)
	}
	if s := mem["superseded"].([]any)[0].(map[string]any); s["id"] != friday || s["superseded_by"] != monday {
		t.Errorf("superseded decision %v", s)
	}
	env.Do(t, "GET", path+"?format=xml", aliceKey, nil).ExpectError(t, 400, "INVALID_REQUEST")

	// The markdown a rebuild writes is rendered from the same decisions.
	rebuilt := env.Do(t, "POST", path, aliceKey, nil).Expect(t, 200)
	if n := Num(t, rebuilt.JSON(t), "rebuilt_from_decisions"); n != 1 {
		t.Errorf("rebuilt from %v decisions, want 1", n)
	}
	md := Str(t, env.Do(t, "GET", path, aliceKey, nil).Expect(t, 200).JSON(t), "memory")
	current, old, _ := strings.Cut(md, "## Superseded decisions")
	if !strings.Contains(current, "## Ship on Monday") || !strings.Contains(current, "Holds from 2027-03-01T00:00:00.000Z until 2027-04-01T00:00:00.000Z.") ||
		!strings.Contains(current, `Supersedes "Ship on Friday" (node `+friday+`)`) || !strings.Contains(old, `SUPERSEDED: "Ship on Friday"`) {
		t.Errorf("rebuilt markdown:\n%s", md)
	}

	// If-Match on the memory version.
	read := env.Do(t, "GET", path, aliceKey, nil).Expect(t, 200)
	etag := read.Header.Get("ETag")
	if etag != `"`+strconv.Itoa(int(Num(t, read.JSON(t), "version")))+`"` || etag != rebuilt.Header.Get("ETag") {
		t.Fatalf("ETag %q of %s (the rebuild's %q)", etag, read.Body, rebuilt.Header.Get("ETag"))
	}
	if j := env.Do(t, "GET", path+"?format=json", aliceKey, nil).Expect(t, 200); j.Header.Get("ETag") != etag {
		t.Errorf("format=json ETag %q, want %q", j.Header.Get("ETag"), etag)
	}
	put := func(ifMatch, body string) *Response {
		return env.Send(t, Request{Method: "PUT", Path: path, Key: aliceKey, Body: map[string]any{"body": body},
			Headers: map[string]string{"If-Match": ifMatch}})
	}
	written := put(etag, "# Mine\n").Expect(t, 200)
	if written.Header.Get("ETag") == etag {
		t.Fatalf("ETag after a write is still %s", etag)
	}
	put(etag, "# Stale\n").ExpectError(t, 412, "PRECONDITION_FAILED")
	if got := Str(t, env.Do(t, "GET", path, aliceKey, nil).Expect(t, 200).JSON(t), "memory"); got != "# Mine\n" {
		t.Errorf("memory after a stale write %q", got)
	}
	put("not-a-version", "x").ExpectError(t, 400, "INVALID_REQUEST")

	held := written.Header.Get("ETag")
	statuses := make(chan int, 4)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			statuses <- env.send(t, Request{Method: "PUT", Path: path, Key: aliceKey, Body: map[string]any{"body": "racer " + strconv.Itoa(i)},
				Headers: map[string]string{"If-Match": held}}).Status
		})
	}
	wg.Wait()
	close(statuses)
	won, refused := 0, 0
	for s := range statuses {
		switch s {
		case 200:
			won++
		case 412:
			refused++
		}
	}
	if won != 1 || refused != 3 {
		t.Errorf("concurrent writers holding one version: %d won, %d got 412; want 1 and 3", won, refused)
	}
}
