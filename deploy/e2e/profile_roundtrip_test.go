package e2e

import (
	"strings"
	"testing"
)

// TestProfileRoundTrip: what the owner reads of llm.txt can be written back unchanged, and the
// public profile and box page stay as they were: the composed part (sources, how to message)
// is dropped on the way in, never stored twice.
func TestProfileRoundTrip(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Ada\n\nI review Go code.", "visibility": "public"})
	base := "/api/objects/" + hash
	env.Do(t, "POST", base+"/sources", key, map[string]any{"kind": "text", "title": "Notes", "text": "Round-trip notes."}).Expect(t, 201)
	before := string(env.Do(t, "GET", base+"/llm.txt", key, nil).Expect(t, 200).Body)
	if !strings.Contains(before, "Round-trip notes.") || strings.Count(before, "## How to message this object") != 1 {
		t.Fatalf("llm.txt before the round trip:\n%s", before)
	}
	page := string(env.Do(t, "GET", "/"+hash, "", nil).Expect(t, 200).Body)

	env.Do(t, "PUT", base+"/llm.txt", key, map[string]any{"body": before}).Expect(t, 200)
	after := string(env.Do(t, "GET", base+"/llm.txt", "", nil).Expect(t, 200).Body)
	if after != before {
		t.Fatalf("llm.txt changed by writing it back unchanged:\n--- before\n%s\n--- after\n%s", before, after)
	}
	if again := string(env.Do(t, "GET", "/"+hash, "", nil).Expect(t, 200).Body); again != page {
		t.Errorf("the box page changed by writing llm.txt back unchanged")
	}
	ctx := env.Do(t, "GET", base+"/context", key, nil).Expect(t, 200).JSON(t)
	if ctx["llm_txt"] != "# Ada\n\nI review Go code." {
		t.Errorf("stored markdown after the round trip: %q", ctx["llm_txt"])
	}
}
