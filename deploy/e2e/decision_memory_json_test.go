package e2e

import (
	"strconv"
	"testing"
)

// TestDecisionMemoryJSONAndIfMatch: format=json lists the current decision with its world time
// and what it superseded, and the superseded one apart; a write with a stale If-Match is 412 and
// changes nothing, one with the current version succeeds.
func TestDecisionMemoryJSONAndIfMatch(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, aliceKey, _, bobKey, threadID := thread(t, env)
	base := "/api/threads/" + threadID
	friday := Str(t, env.Do(t, "POST", base+"/decision", aliceKey, map[string]any{
		"title": "Ship on Friday", "body": "We ship on Friday.", "confidence": 0.9,
	}).Expect(t, 201).JSON(t), "id")
	monday := Str(t, env.Do(t, "POST", base+"/decision", bobKey, map[string]any{
		"title": "Ship on Monday", "body": "We ship on Monday.", "supersedes_node_ids": []string{friday},
		"valid_from": "2027-03-01T00:00:00Z", "valid_until": "2027-04-01T00:00:00Z",
	}).Expect(t, 201).JSON(t), "id")
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

	// If-Match on the memory version.
	read := env.Do(t, "GET", path, aliceKey, nil).Expect(t, 200)
	etag := read.Header.Get("ETag")
	if etag != `"`+strconv.Itoa(int(Num(t, read.JSON(t), "version")))+`"` {
		t.Fatalf("ETag %q of %s", etag, read.Body)
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
	put(written.Header.Get("ETag"), "# Mine again\n").Expect(t, 200)
	put("not-a-version", "x").ExpectError(t, 400, "INVALID_REQUEST")
}
