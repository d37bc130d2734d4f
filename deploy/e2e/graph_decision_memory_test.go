package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// TestDecisionMemoryKeepsTheOwnersDecisions: a stranger who opens a thread and records
// decisions in it fills only its own decision memory. The owner's rebuild uses the decisions it
// recorded, and those the stranger records after the owner wrote into the thread (accepting the
// relationship), each naming who recorded it.
func TestDecisionMemoryKeepsTheOwnersDecisions(t *testing.T) {
	t.Parallel()
	env := Start(t)
	stranger, strangerKey, owner, ownerKey, threadID := thread(t, env)
	base := "/api/threads/" + threadID + "/decision"
	for i := range 5 {
		env.Do(t, "POST", base, strangerKey, map[string]any{"title": fmt.Sprintf("STRANGER-EARLY-%d", i), "body": "Decided for you."}).
			Expect(t, 201)
	}
	env.Do(t, "POST", base, ownerKey, map[string]any{"title": "OWNER-DECISION", "body": "Mine.", "confidence": 0.9}).Expect(t, 201)
	env.Do(t, "POST", base, strangerKey, map[string]any{"title": "STRANGER-LATE", "body": "Now we talk."}).Expect(t, 201)

	path := "/api/objects/" + owner + "/decision-memory"
	env.Eventually(t, func() bool {
		return Num(t, env.Do(t, "POST", path, ownerKey, nil).Expect(t, 200).JSON(t), "rebuilt_from_decisions") == 2
	}, "the owner's decision and the stranger's later one in the owner's decision memory")
	mem := Str(t, env.Do(t, "GET", path, ownerKey, nil).Expect(t, 200).JSON(t), "memory")
	if strings.Contains(mem, "STRANGER-EARLY") || !containsAll(mem, "## OWNER-DECISION", "by "+owner, "## STRANGER-LATE", "by "+stranger) {
		t.Errorf("the owner's decision memory:\n%s", mem)
	}
	if n := Num(t, env.Do(t, "POST", path, ownerKey, nil).Expect(t, 200).JSON(t), "rebuilt_from_decisions"); n != 2 {
		t.Errorf("a second rebuild used %v decisions, want 2", n)
	}

	// The stranger's own memory holds all it recorded, and the owner's decision.
	spath := "/api/objects/" + stranger + "/decision-memory"
	env.Eventually(t, func() bool {
		return Num(t, env.Do(t, "POST", spath, strangerKey, nil).Expect(t, 200).JSON(t), "rebuilt_from_decisions") == 7
	}, "every decision of the thread in the stranger's decision memory")
}
