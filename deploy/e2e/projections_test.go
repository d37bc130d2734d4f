package e2e

import (
	"fmt"
	"testing"
)

// TestRulesAnswerWithoutMailbox: context-svc keeps its own projection of the sender blocks, so the
// owner's rules read with the blocked list answers while mailbox-svc is down; so do the public
// rules read and a rules write, which publishes its event for mailbox-svc to take up later.
func TestRulesAnswerWithoutMailbox(t *testing.T) {
	t.Parallel()
	env := Start(t)
	bob, bobKey := env.CreateObject(t, nil)
	carol, _ := env.CreateObject(t, nil)
	env.Do(t, "POST", "/api/objects/"+bob+"/sender-blocks", bobKey, map[string]any{"blocked_hash": carol}).Expect(t, 201)
	rules := "/api/objects/" + bob + "/rules?show_blocked_list=1"
	blocked := func() string {
		return fmt.Sprint(env.Do(t, "GET", rules, bobKey, nil).Expect(t, 200).JSON(t)["blocked_hashes"])
	}
	env.Eventually(t, func() bool { return blocked() == fmt.Sprint([]any{carol}) }, "the block in the blocked list")

	if err := env.Stack.StopReplica("mailbox-svc", 0); err != nil {
		t.Fatal(err)
	}
	if got := blocked(); got != fmt.Sprint([]any{carol}) {
		t.Fatalf("rules read with mailbox-svc down: blocked_hashes %v, want [%s]", got, carol)
	}
	env.Do(t, "PUT", "/api/objects/"+bob+"/rules", bobKey, map[string]any{"body": `{"participant_admission":{"mode":"approval"}}`}).Expect(t, 200)
	if got := MustJSON(env.Do(t, "GET", "/api/objects/"+bob+"/rules", "", nil).Expect(t, 200).JSON(t)); got != `{"participant_admission":{"mode":"approval"}}` {
		t.Fatalf("public rules read after a write with mailbox-svc down: %s", got)
	}
	if got := blocked(); got != fmt.Sprint([]any{carol}) {
		t.Fatalf("owner's rules read after a write with mailbox-svc down: blocked_hashes %v, want [%s]", got, carol)
	}
}
