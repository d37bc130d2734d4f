package e2e

import (
	"fmt"
	"testing"

	"github.com/svcdev/svc/pkg/httpx"
)

// TestHookListsCommandBudget: a page of an owner's webhooks, of the context subscriptions to its
// box and of its claims, and a claim create, send a bounded number of store commands, counted by
// request id (TestStoreCommandBudget's counter): each list one find of its range, never a point
// read per entry of a list or a scan.
func TestHookListsCommandBudget(t *testing.T) {
	t.Parallel()
	counter := newCommandCounter()
	rcv := newReceiver(t)
	env := webhookEnv(t, rcv, WithCommandMonitor(counter.monitor()))
	box, key := env.CreateObject(t, nil)
	_, strangerKey := env.CreateObject(t, nil)
	base := "/api/objects/" + box
	for i := range 3 {
		createWebhook(t, env, box, key, map[string]any{"callback_url": rcv.URL(fmt.Sprintf("/hook%d", i))})
		env.Do(t, "POST", base+"/context-subscriptions", strangerKey, map[string]any{"callback_url": rcv.URL(fmt.Sprintf("/watch%d", i))}).Expect(t, 201)
		env.Do(t, "POST", "/api/claims", key, map[string]any{"object_hash": box, "proof_type": "domain",
			"claimed_target": fmt.Sprintf("c%d.example.test", i)}).Expect(t, 201)
	}
	cases := []struct {
		name, method, path string
		body               any
		want, budget       int
	}{
		// webhook-svc: the object's range of webhooks, the webhooks it names ($in).
		{"webhooks page", "GET", base + "/webhooks", nil, 200, 2},
		// The box's range of context subscriptions, the subscriptions it names ($in).
		{"context subscriptions page", "GET", base + "/context-subscriptions", nil, 200, 2},
		// claims-svc: the object's range of claims (copies), then per claim the last of its
		// states and the last of its checks: 1 + 2*3.
		{"claims page", "GET", base + "/claims", nil, 200, 7},
		// The object's resolution comes from the cache. The quota's places (one find, bounded by
		// the quota), the place, the claim and its list entry.
		{"claim create", "POST", "/api/claims", map[string]any{"object_hash": box, "proof_type": "domain", "claimed_target": "new.example.test"}, 201, 4},
	}
	for i, c := range cases {
		rid := fmt.Sprintf("hookbudget-%02d", i)
		env.Send(t, Request{Method: c.method, Path: c.path, Key: key, Body: c.body, Headers: map[string]string{httpx.HeaderRequestID: rid}}).Expect(t, c.want)
		cmds := counter.of(rid)
		t.Logf("%-27s %2d (budget %2d): %v", c.name, len(cmds), c.budget, cmds)
		if len(cmds) > c.budget || len(cmds) == 0 {
			t.Errorf("%s: %d store commands, budget %d: %v", c.name, len(cmds), c.budget, cmds)
		}
	}
}
