package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/events"
)

// TestPrivateGuidance: guidance is versioned per participant and read only by its author's owner.
func TestPrivateGuidance(t *testing.T) {
	t.Parallel()
	env := Start(t)
	_, aliceKey, _, bobKey, threadID := thread(t, env)
	path := "/api/threads/" + threadID + "/private-guidance"
	env.Do(t, "GET", path, aliceKey, nil).ExpectError(t, 404, "NOT_FOUND")
	first := env.Do(t, "PUT", path, aliceKey, map[string]any{"body": "Be patient with Bob."}).Expect(t, 200).JSON(t)
	if first["ok"] != true || first["thread_id"] != threadID || Num(t, first, "version") != 1 || first["updated_at"] == nil {
		t.Fatalf("guidance write answered %v", first)
	}
	second := env.Do(t, "PUT", path, aliceKey, map[string]any{"body": "Push for Friday."}).Expect(t, 200).JSON(t)
	env.Do(t, "PUT", path, bobKey, map[string]any{"body": "Bob's own steering."}).Expect(t, 200)
	g := env.Do(t, "GET", path, aliceKey, nil).Expect(t, 200).JSON(t)
	if g["body"] != "Push for Friday." || Num(t, g, "version") != 2 || g["updated_at"] != second["updated_at"] ||
		MustJSON(versionNumbers(g["versions"])) != "[2,1]" {
		t.Errorf("alice's guidance %v", g)
	}
	if b := env.Do(t, "GET", path, bobKey, nil).Expect(t, 200).JSON(t); b["body"] != "Bob's own steering." || Num(t, b, "version") != 1 {
		t.Errorf("bob reads %v, want his own guidance only", b)
	}
	env.Do(t, "PUT", path, aliceKey, map[string]any{"body": ""}).ExpectError(t, 400, "INVALID_REQUEST")
	env.Do(t, "PUT", path, aliceKey, map[string]any{}).ExpectError(t, 400, "MISSING_FIELD")
}

// TestPrivateGuidanceNeverLeaks plants a marker in private guidance, runs every flow of the
// thread's participants around it, then searches for the marker in every event on the bus, every
// log line of the suite, every webhook delivery, the other side's reads, the graph, the ingest
// overview, llm.txt, the feeds and the answers to bad requests.
func TestPrivateGuidanceNeverLeaks(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	env := webhookEnv(t, rcv)
	watch := watchTopics(t, env.Brokers, env.Name, events.TopicIdentity, events.TopicContext, events.TopicMailbox,
		events.TopicGraph, events.TopicClaims, events.TopicFeed)
	marker := "guidance-marker-" + strings.ToLower(apikey.NewID("m"))
	alice, aliceKey, bob, bobKey, threadID := thread(t, env)
	createWebhook(t, env, alice, aliceKey, map[string]any{"callback_url": rcv.URL("/alice")})
	createWebhook(t, env, bob, bobKey, map[string]any{"callback_url": rcv.URL("/bob")})
	_, carolKey := env.CreateObject(t, nil)

	path := "/api/threads/" + threadID + "/private-guidance"
	var answers []*Response
	answers = append(answers,
		env.Do(t, "PUT", path, aliceKey, map[string]any{"body": "Never agree before Friday. " + marker}).Expect(t, 200),
		env.Do(t, "PUT", path, aliceKey, map[string]any{"body": marker + strings.Repeat("x", 70<<10)}),
		env.Do(t, "PUT", path, aliceKey, map[string]any{"body": marker, "note": marker}),
		env.Do(t, "PUT", path, carolKey, map[string]any{"body": marker}),
		env.Do(t, "GET", path, bobKey, nil),
		env.Do(t, "GET", path, carolKey, nil),
	)
	if g := env.Do(t, "GET", path, aliceKey, nil).Expect(t, 200).JSON(t); !strings.Contains(Str(t, g, "body"), marker) {
		t.Fatalf("alice does not read her own guidance: %v", g)
	}
	// Everything else the two sides do in the thread.
	sendMessage(t, env, bob, alice, threadID, "Friday works?")
	// Bob's reply is what makes alice's decisions his to remember: wait until graph-svc projected it.
	env.Eventually(t, func() bool {
		nodes, _ := graphOf(t, env, bobKey, threadID, "")
		return len(nodes) == 2
	}, "bob's reply in the graph")
	node := addNode(t, env, aliceKey, threadID, "question", "Which day?", "")
	addNode(t, env, aliceKey, threadID, "private_goal", "Close the deal.", "owner_only")
	env.Do(t, "POST", "/api/threads/"+threadID+"/decision", aliceKey,
		map[string]any{"title": "Ship on Friday", "body": "Agreed.", "confidence": 0.9, "supersedes_node_ids": []string{node}}).Expect(t, 201)
	env.Do(t, "PUT", "/api/objects/"+alice+"/llm.txt", aliceKey, map[string]any{"body": "# Alice\n\nBuilds parsers."}).Expect(t, 200)
	for _, side := range []struct{ hash, key string }{{alice, aliceKey}, {bob, bobKey}} {
		env.Eventually(t, func() bool {
			return Num(t, env.Do(t, "POST", "/api/objects/"+side.hash+"/decision-memory", side.key, nil).Expect(t, 200).JSON(t), "rebuilt_from_decisions") == 1
		}, "the decision in decision memory")
	}
	// Wait for what must reach the bus and the receivers before searching them.
	watch.wait(t, env, events.DecisionRecorded, &map[string]any{}, func() bool { return true })
	env.Eventually(t, func() bool {
		seen := map[string]bool{}
		for _, r := range rcv.Got() {
			seen[r.Path+" "+r.Payload.Type] = true
		}
		return seen["/alice decision"] && seen["/bob decision"] && seen["/alice message"] && seen["/alice context_updated"]
	}, "decision, message and context_updated deliveries")
	for _, r := range rcv.Got() {
		if r.Payload.Type == "decision" && (r.Payload.Data["thread_id"] != threadID || r.Payload.Data["title"] != "Ship on Friday" ||
			r.Payload.Data["node_id"] == nil || r.Payload.Data["body"] != nil) {
			t.Errorf("decision delivery %s: %v", r.Path, r.Payload.Data)
		}
	}

	// The other side's reads, the graph, public reads and feeds.
	for _, key := range []string{aliceKey, bobKey} {
		answers = append(answers,
			env.Do(t, "GET", "/api/threads/"+threadID+"/graph", key, nil).Expect(t, 200),
			env.Do(t, "GET", "/api/threads/"+threadID, key, nil).Expect(t, 200))
	}
	for _, side := range []struct{ hash, key string }{{alice, aliceKey}, {bob, bobKey}} {
		answers = append(answers,
			env.Do(t, "GET", "/api/objects/"+side.hash+"/mailbox", side.key, nil).Expect(t, 200),
			env.Do(t, "GET", "/api/objects/"+side.hash+"/decision-memory", side.key, nil).Expect(t, 200),
			env.Do(t, "GET", "/api/objects/"+side.hash+"/llm.txt", "", nil).Expect(t, 200),
			env.Do(t, "GET", "/api/objects/"+side.hash+"/agent-card.json", "", nil).Expect(t, 200),
			env.Do(t, "GET", "/api/objects/"+side.hash+"/context", side.key, nil).Expect(t, 200),
			env.Do(t, "GET", "/api/ingest?include_graph=1", side.key, nil).Expect(t, 200),
			env.Do(t, "GET", "/api/threads/"+threadID+"/sources", side.key, nil).Expect(t, 200))
	}
	answers = append(answers,
		env.Do(t, "GET", "/api/feed", "", nil).Expect(t, 200),
		env.Do(t, "GET", "/feed.txt", "", nil).Expect(t, 200),
		env.Do(t, "GET", "/api/activity", "", nil).Expect(t, 200))
	for _, page := range []string{"/" + alice, "/" + bob, "/llms.txt"} {
		res, err := http.Get(env.URL + page)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		answers = append(answers, &Response{Status: res.StatusCode, Body: body, path: page})
	}

	for _, a := range answers {
		if strings.Contains(string(a.Body), marker) {
			t.Errorf("%s %s answered %d with the guidance: %s", a.method, a.path, a.Status, a.Body)
		}
	}
	watch.mu.Lock()
	evs := append([]events.Event(nil), watch.evs...)
	watch.mu.Unlock()
	for _, ev := range evs {
		if strings.Contains(string(ev.Data), marker) || strings.Contains(ev.Hash, marker) {
			t.Errorf("event %s %s carries the guidance", ev.Type, ev.ID)
		}
	}
	for _, r := range rcv.Got() {
		if strings.Contains(string(r.Body), marker) || strings.Contains(MustJSON(r.Header), marker) {
			t.Errorf("webhook delivery %s %s carries the guidance", r.Path, r.Payload.Type)
		}
	}
	logs := env.Logs()
	if !strings.Contains(logs, `"service":"graph-svc"`) || !strings.Contains(logs, "private-guidance") {
		t.Fatal("graph-svc's logs were not captured")
	}
	if strings.Contains(logs, marker) {
		for _, l := range strings.Split(logs, "\n") {
			if strings.Contains(l, marker) {
				t.Errorf("the guidance appears in the logs: %.400s", l)
			}
		}
	}
	if len(evs) < 5 || len(rcv.Got()) < 4 {
		t.Fatalf("searched only %d events and %d deliveries", len(evs), len(rcv.Got()))
	}
}
