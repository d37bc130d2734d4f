package events

import (
	"encoding/json"
	"testing"
)

// TestPublicLeavesOutOwnerOnlyChanges: a context.updated of a profile write is public with its
// listed fields only; one of a decision-memory write (from a context-svc that still published
// them) has no public payload at all.
func TestPublicLeavesOutOwnerOnlyChanges(t *testing.T) {
	t.Parallel()
	ev := func(change string) Event {
		data, _ := json.Marshal(map[string]any{"version": 3, "updated_at": "2026-11-24T18:00:00.000Z", "title": "Ada", "change": change, "secret": "x"})
		return Event{ID: "evt_1", Type: ContextUpdated, ObjectID: "obj_a", Hash: "svc_a", Time: "2026-11-24T18:00:00.000Z", Data: data}
	}
	p, ok, err := Public(ev("llm_txt"))
	if err != nil || !ok || p.Type != WebhookContextUpdated || p.Data["change"] != "llm_txt" || p.Data["secret"] != nil {
		t.Fatalf("profile write: %+v ok=%v err=%v, want a public context_updated without unlisted fields", p, ok, err)
	}
	if p, ok, err := Public(ev("decision_memory")); err != nil || ok {
		t.Fatalf("decision-memory write: %+v ok=%v err=%v, want no public payload", p, ok, err)
	}
}
