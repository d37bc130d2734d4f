package e2e

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"
)

// memorySearch runs a memory search of hash with key and returns its hits.
func memorySearch(t testing.TB, env *Env, hash, key string, q url.Values) []map[string]any {
	t.Helper()
	r := env.Do(t, "GET", "/api/objects/"+hash+"/memory/search?"+q.Encode(), key, nil).Expect(t, 200).JSON(t)
	var hits []map[string]any
	for _, h := range r["hits"].([]any) {
		hits = append(hits, h.(map[string]any))
	}
	return hits
}

func hitIDs(hits []map[string]any) []string {
	out := []string{}
	for _, h := range hits {
		out = append(out, h["node_id"].(string))
	}
	return out
}

// TestMemorySearchSupersession: after "ship on Friday" is superseded by "ship on Monday" in a
// thread with bob, alice's search for "ship" with peer=bob finds Monday only, both with
// include_superseded, and Friday as current as of a time between the two decisions.
func TestMemorySearchSupersession(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, aliceKey, bob, bobKey, threadID := thread(t, env)
	base := "/api/threads/" + threadID
	friday := Str(t, env.Do(t, "POST", base+"/decision", aliceKey, map[string]any{
		"title": "Ship on Friday", "body": "We ship the release on Friday.",
	}).Expect(t, 201).JSON(t), "id")
	time.Sleep(20 * time.Millisecond)
	between := time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	time.Sleep(20 * time.Millisecond)
	monday := Str(t, env.Do(t, "POST", base+"/decision", bobKey, map[string]any{
		"title": "Ship on Monday", "body": "Shipping moves to Monday.", "supersedes_node_ids": []string{friday},
	}).Expect(t, 201).JSON(t), "id")

	hits := memorySearch(t, env, alice, aliceKey, url.Values{"q": {"ship"}, "peer": {bob}})
	if MustJSON(hitIDs(hits)) != MustJSON([]string{monday}) {
		t.Fatalf("search for ship with peer: %v, want only monday %s", hits, monday)
	}
	h := hits[0]
	if h["thread_id"] != threadID || h["peer_hash"] != bob || h["author_hash"] != bob || h["type"] != "decision" ||
		h["superseded_by"] != nil || h["title"] != "Ship on Monday" || h["excerpt"] != "Shipping moves to Monday." || h["created_at"] == nil || Num(t, h, "score") <= 0 {
		t.Errorf("monday's hit %v", h)
	}
	hits = memorySearch(t, env, alice, aliceKey, url.Values{"q": {"shipping"}, "peer": {bob}, "include_superseded": {"true"}})
	if got := hitIDs(hits); len(got) != 2 || !slices.Contains(got, friday) || !slices.Contains(got, monday) {
		t.Fatalf("include_superseded: %v, want friday and monday", got)
	}
	for _, h := range hits {
		if h["node_id"] == friday && (h["superseded_by"] != monday || h["superseded_at"] == nil) {
			t.Errorf("friday's hit %v, want superseded by %s", h, monday)
		}
	}
	// Pages: one hit a page, the second page through next_cursor, then none left.
	first := env.Do(t, "GET", "/api/objects/"+alice+"/memory/search?q=ship&include_superseded=true&limit=1", aliceKey, nil).Expect(t, 200).JSON(t)
	cursor, _ := first["next_cursor"].(string)
	if len(first["hits"].([]any)) != 1 || cursor == "" {
		t.Fatalf("first page %v", first)
	}
	second := env.Do(t, "GET", "/api/objects/"+alice+"/memory/search?q=ship&include_superseded=true&limit=1&cursor="+url.QueryEscape(cursor), aliceKey, nil).
		Expect(t, 200).JSON(t)
	if h := second["hits"].([]any); len(h) != 1 || second["next_cursor"] != nil ||
		h[0].(map[string]any)["node_id"] == first["hits"].([]any)[0].(map[string]any)["node_id"] {
		t.Errorf("second page %v after %v", second, first)
	}
	env.Do(t, "GET", "/api/objects/"+alice+"/memory/search?q=release&limit=1&cursor="+url.QueryEscape(cursor), aliceKey, nil).
		ExpectError(t, 400, "INVALID_REQUEST")
	hits = memorySearch(t, env, bob, bobKey, url.Values{"q": {"ship"}, "peer": {alice}, "as_of": {between}})
	if MustJSON(hitIDs(hits)) != MustJSON([]string{friday}) || hits[0]["superseded_by"] != nil {
		t.Errorf("as_of between the decisions: %v, want friday as current", hits)
	}
	// Another peer, a type filter, a time window that ends before both: nothing.
	carol, carolKey := env.CreateObject(t, nil)
	for _, q := range []url.Values{{"q": {"ship"}, "peer": {carol}}, {"q": {"ship"}, "types": {"evidence"}},
		{"q": {"ship"}, "until": {between}, "since": {"2000-01-01T00:00:00Z"}, "include_superseded": {"1"}, "types": {"evidence,answer"}}} {
		if got := memorySearch(t, env, alice, aliceKey, q); len(got) != 0 {
			t.Errorf("search %v: %v", q, got)
		}
	}
	// Messages are indexed too, with their message id as provenance.
	msg := Str(t, sendMessage(t, env, bob, alice, threadID, "Deployment checklist attached."), "id")
	env.Eventually(t, func() bool {
		hits := memorySearch(t, env, alice, aliceKey, url.Values{"q": {"deploy checklists"}, "types": {"message"}})
		return len(hits) == 1 && hits[0]["provenance"].(map[string]any)["message_id"] == msg
	}, "the message in alice's memory search")

	// A sub-key with read and mailbox searches (as every graph read); one without either is 403
	// INSUFFICIENT_SCOPE.
	subKey := func(scopes ...string) string {
		return Str(t, env.Do(t, "POST", "/api/objects/"+alice+"/keys", aliceKey, map[string]any{"label": "agent", "scopes": scopes}).
			Expect(t, 201).JSON(t), "key")
	}
	if got := hitIDs(memorySearch(t, env, alice, subKey("read", "mailbox"), url.Values{"q": {"ship"}, "peer": {bob}})); MustJSON(got) != MustJSON([]string{monday}) {
		t.Errorf("a read sub-key's search: %v", got)
	}
	for _, scopes := range [][]string{{"write", "mailbox"}, {"read"}} {
		env.Do(t, "GET", "/api/objects/"+alice+"/memory/search?q=ship", subKey(scopes...), nil).ExpectError(t, 403, "INSUFFICIENT_SCOPE")
	}

	// Only the object's own keys search its memory; bad input is 400.
	env.Do(t, "GET", "/api/objects/"+alice+"/memory/search?q=ship", carolKey, nil).ExpectError(t, 403, "FORBIDDEN")
	env.Do(t, "GET", "/api/objects/"+alice+"/memory/search?q=ship", "", nil).ExpectError(t, 401, "UNAUTHORIZED")
	for _, q := range []string{"", "q=ship&as_of=yesterday", "q=ship&types=memo", "q=ship&limit=51", "q=ship&cursor=forged",
		"q=ship&include_superseded=maybe"} {
		r := env.Do(t, "GET", "/api/objects/"+alice+"/memory/search?"+q, aliceKey, nil)
		if r.Status != 400 {
			t.Errorf("search ?%s answered %d %s, want 400", q, r.Status, string(r.Body))
		}
	}
}

// TestMemorySearchNeverLeaks plants markers in bob's owner_only node and in both sides' private
// guidance: alice's search finds none of them; bob finds his own node and no guidance.
func TestMemorySearchNeverLeaks(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, aliceKey, bob, bobKey, threadID := thread(t, env)
	secret := addNode(t, env, bobKey, threadID, "private_goal", "Ship zxqsecretmarker at any price.", "owner_only")
	shared := addNode(t, env, bobKey, threadID, "evidence", "Ship zxqsharedmarker notes.", "")
	for _, key := range []string{aliceKey, bobKey} {
		env.Do(t, "PUT", "/api/threads/"+threadID+"/private-guidance", key, map[string]any{"body": "Ship zxqguidancemarker quietly."}).Expect(t, 200)
	}
	q := url.Values{"q": {"zxqsecretmarker zxqguidancemarker zxqsharedmarker ship"}, "include_superseded": {"true"}, "limit": {"50"}}
	if got := hitIDs(memorySearch(t, env, alice, aliceKey, q)); MustJSON(got) != MustJSON([]string{shared}) {
		t.Errorf("alice's search: %v, want only the shared node %s", got, shared)
	}
	if got := hitIDs(memorySearch(t, env, bob, bobKey, q)); len(got) != 2 || !slices.Contains(got, secret) || !slices.Contains(got, shared) {
		t.Errorf("bob's search: %v, want his owner_only node and the shared one", got)
	}
	for _, g := range []string{"zxqguidancemarker", "quietly"} {
		for _, side := range []struct{ hash, key string }{{alice, aliceKey}, {bob, bobKey}} {
			if got := memorySearch(t, env, side.hash, side.key, url.Values{"q": {g}}); len(got) != 0 {
				t.Errorf("%s's search for guidance %q: %v", side.hash, g, got)
			}
		}
	}
}

// TestMemorySearchLimitNamesItsBound: the documented bound of a search's limit (openapi.json and
// the search_memory tool's input schema state one maximum) is the one the route keeps: a limit
// past it, within every other list's bound or not, or not an integer from 1 up, is 400 naming
// that bound; the bound itself is served.
func TestMemorySearchLimitNamesItsBound(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, nil)

	doc := env.send(t, Request{Method: "GET", Path: "/openapi.json"}).Expect(t, 200).JSON(t)
	op := doc["paths"].(map[string]any)["/api/objects/{hash}/memory/search"].(map[string]any)["get"].(map[string]any)
	bound := -1
	for _, p := range op["parameters"].([]any) {
		if p := p.(map[string]any); p["name"] == "limit" {
			max, ok := p["schema"].(map[string]any)["maximum"].(float64)
			if !ok {
				t.Fatalf("openapi.json states no maximum of memory search's limit: %v", p)
			}
			bound = int(max)
		}
	}
	if bound < 1 || bound >= 200 {
		t.Fatalf("openapi.json's maximum of memory search's limit is %d, want one below every other list's 200", bound)
	}
	tools, err := mcpSession(t, env, key).ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	toolBound := -1
	for _, tool := range tools.Tools {
		if tool.Name == "search_memory" {
			var in struct {
				Properties map[string]struct {
					Maximum *float64 `json:"maximum"`
				} `json:"properties"`
			}
			if err := json.Unmarshal([]byte(MustJSON(tool.InputSchema)), &in); err != nil {
				t.Fatal(err)
			}
			if m := in.Properties["limit"].Maximum; m != nil {
				toolBound = int(*m)
			}
		}
	}
	if toolBound != bound {
		t.Errorf("search_memory's input schema states a maximum limit of %d, openapi.json %d", toolBound, bound)
	}

	search := "/api/objects/" + hash + "/memory/search?q=ship&limit="
	want := fmt.Sprintf("limit must be an integer from 1 to %d", bound)
	for _, limit := range []string{"500", "201", "200", strconv.Itoa(bound + 1), "0", "-1", "ten", "1.5"} {
		r := env.Do(t, "GET", search+url.QueryEscape(limit), key, nil)
		r.ExpectError(t, 400, "INVALID_REQUEST")
		var body struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		r.Decode(t, &body)
		if body.Error.Message != want {
			t.Errorf("limit=%s: %q, want %q", limit, body.Error.Message, want)
		}
	}
	env.Do(t, "GET", search+strconv.Itoa(bound), key, nil).Expect(t, 200)
}

// TestMemorySearchNamesCurrentHashes: a search's hits name their authors and peers by their hash
// now, and the peer filter takes the peer's hash now: after alice claims a custom hash, bob's
// search shows her node under it and filters on it.
func TestMemorySearchNamesCurrentHashes(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, aliceKey, bob, bobKey, threadID := thread(t, env)
	node := Str(t, env.Do(t, "POST", "/api/threads/"+threadID+"/nodes", aliceKey, map[string]any{
		"type": "evidence", "body": "The kestrel parser passes every fixture.",
	}).Expect(t, 201).JSON(t), "id")
	named := func(hash string, q url.Values) bool {
		hits := memorySearch(t, env, bob, bobKey, q)
		return len(hits) == 1 && hits[0]["node_id"] == node && hits[0]["author_hash"] == hash && hits[0]["peer_hash"] == hash
	}
	env.Eventually(t, func() bool { return named(alice, url.Values{"q": {"kestrel"}}) }, "alice's node in bob's memory under her hash")

	env.Do(t, "POST", "/api/objects/claim-custom-hash", aliceKey,
		map[string]any{"username": "memory_alice", "payment_reference": issueVoucher()}).Expect(t, 200)
	env.Eventually(t, func() bool {
		return named("svc_memory_alice", url.Values{"q": {"kestrel"}, "peer": {"svc_memory_alice"}})
	}, "alice's node in bob's memory under her custom hash, found by it")
}
