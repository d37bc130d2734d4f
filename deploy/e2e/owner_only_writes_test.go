package e2e

import (
	"testing"
	"time"

	"github.com/svcdev/svc/pkg/events"
)

// TestOwnerOnlyWritesStayPrivate: decision-memory writes (PUT, rebuild) and private guidance are
// the owner's own. A stranger watching the box's context receives nothing of them and the
// context version it sees does not move, while a public profile change still reaches it (at the
// version after the last public one); decision memory and guidance move their own versions; no
// event on the bus, no public activity row, nothing on the owner's webhook or event stream
// tells of them.
func TestOwnerOnlyWritesStayPrivate(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	env := webhookEnv(t, rcv)
	watch := watchTopics(t, env.Brokers, env.Name, events.TopicContext, events.TopicGraph)
	box, boxKey := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Box\n\nPublic."})
	stranger, strangerKey := env.CreateObject(t, nil)
	boxPath := "/api/objects/" + box
	env.Do(t, "POST", boxPath+"/context-subscriptions", strangerKey, map[string]any{"callback_url": rcv.URL("/stranger")}).Expect(t, 201)
	createWebhook(t, env, box, boxKey, map[string]any{"callback_url": rcv.URL("/owner")})
	threadID := Str(t, sendMessage(t, env, stranger, box, "", "Hello, box."), "thread_id")

	seen := func() (version float64, card string) {
		obj := env.Do(t, "GET", boxPath, strangerKey, nil).Expect(t, 200).JSON(t)
		return Num(t, obj, "version"), Str(t, env.Do(t, "GET", boxPath+"/agent-card.json", "", nil).Expect(t, 200).JSON(t), "version")
	}
	before, cardBefore := seen()

	// Owner-only writes: decision memory twice, a rebuild, guidance twice.
	memPath := boxPath + "/decision-memory"
	if w := env.Do(t, "PUT", memPath, boxKey, map[string]any{"body": "owner-only-marker: we settle for less"}).Expect(t, 200).JSON(t); Num(t, w, "version") != 1 {
		t.Errorf("first decision-memory write %v, want memory version 1", w)
	}
	env.Do(t, "PUT", memPath, boxKey, map[string]any{"body": "owner-only-marker: second"}).Expect(t, 200)
	if r := env.Do(t, "POST", memPath, boxKey, nil).Expect(t, 200).JSON(t); Num(t, r, "version") != 3 {
		t.Errorf("rebuild %v, want memory version 3", r)
	}
	guidance := "/api/threads/" + threadID + "/private-guidance"
	env.Do(t, "PUT", guidance, boxKey, map[string]any{"body": "Be brief."}).Expect(t, 200)
	if g := env.Do(t, "PUT", guidance, boxKey, map[string]any{"body": "Be briefer."}).Expect(t, 200).JSON(t); Num(t, g, "version") != 2 {
		t.Errorf("second guidance write %v, want guidance version 2", g)
	}

	if after, cardAfter := seen(); after != before || cardAfter != cardBefore {
		t.Errorf("the context version a stranger sees moved on owner-only writes: object %v → %v, agent card %s → %s",
			before, after, cardBefore, cardAfter)
	}
	mem := env.Do(t, "GET", memPath, boxKey, nil).Expect(t, 200).JSON(t)
	if Num(t, mem, "version") != 3 || MustJSON(versionNumbers(mem["versions"])) != "[3,2,1]" {
		t.Errorf("decision memory %v, want its own versions 3, 2, 1", mem)
	}

	// A public change still reaches the stranger, at the next context version.
	w := env.Do(t, "PUT", boxPath+"/llm.txt", boxKey, map[string]any{"body": "# Box\n\nNews."}).Expect(t, 200).JSON(t)
	if Num(t, w, "version") != before+1 {
		t.Errorf("the public write after owner-only ones got version %v, want %v", w["version"], before+1)
	}
	env.Eventually(t, func() bool {
		for _, r := range rcv.Got() {
			if r.Path == "/stranger" {
				return true
			}
		}
		return false
	}, "the stranger's delivery of the public change")
	env.Eventually(t, func() bool {
		for _, r := range rcv.Got() {
			if r.Path == "/owner" && r.Payload.Type == "context_updated" {
				return true
			}
		}
		return false
	}, "the owner's delivery of the public change")
	time.Sleep(500 * time.Millisecond) // let a wrongly fanned-out delivery show up
	var watched []received
	for _, r := range rcv.Got() {
		if r.Path == "/stranger" {
			watched = append(watched, r)
		}
		if r.Payload.Type == "context_updated" && r.Payload.Data["change"] != "llm_txt" {
			t.Errorf("%s received a context update of an owner-only write: %s", r.Path, r.Body)
		}
	}
	if len(watched) != 1 || watched[0].Payload.Data["version"] != before+1 || watched[0].Payload.Data["change"] != "llm_txt" {
		t.Fatalf("the stranger's context subscription received %d deliveries (%v), want the llm_txt change at version %v only",
			len(watched), watched, before+1)
	}

	stream := env.Do(t, "GET", boxPath+"/events?after=evt_none", boxKey, nil).Expect(t, 200).JSON(t)
	for _, ev := range stream["events"].([]any) {
		m := ev.(map[string]any)
		if m["type"] == "context_updated" && m["data"].(map[string]any)["change"] != "llm_txt" {
			t.Errorf("the owner's event stream tells of an owner-only write: %v", m)
		}
	}
	// Events of one object are projected in order: once the public change shows, an earlier
	// owner-only one would show too.
	updates := 0
	env.Eventually(t, func() bool {
		updates = 0
		for _, it := range env.Do(t, "GET", "/api/activity?limit=200", "", nil).Expect(t, 200).JSON(t)["items"].([]any) {
			if m := it.(map[string]any); m["hash"] == box && m["type"] == events.ContextUpdated {
				updates++
			}
		}
		return updates > 0
	}, "the public change in the public activity")
	if updates != 1 {
		t.Errorf("public activity shows %d context updates of the box, want the public one only", updates)
	}
	var published struct{ Change string }
	watch.wait(t, env, events.ContextUpdated, &published, func() bool { return published.Change == "llm_txt" })
	watch.mu.Lock()
	evs := append([]events.Event(nil), watch.evs...)
	watch.mu.Unlock()
	for _, ev := range evs {
		if ev.Hash != box {
			continue
		}
		if ev.Type == events.ContextUpdated || ev.Type == events.DecisionMemoryUpdated {
			var d struct{ Change string }
			if err := ev.Decode(&d); err != nil || d.Change != "llm_txt" {
				t.Errorf("an event on the bus tells of an owner-only write: %s %s", ev.Type, ev.Data)
			}
		}
	}
}
