package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// burst keeps n senders sending messages to the recipient as fast as the stack takes them (the
// test stacks' rate limits are off), and, when withContext, writing their own llm.txt between
// sends, until the returned stop is called; stop returns how many writes were answered 2xx. The
// recipient's message events share the partition of its own block and rules events, so these
// queue behind the burst's backlog.
func burst(t *testing.T, env *Env, n int, to string, withContext bool) (stop func() int64) {
	t.Helper()
	type sender struct{ hash, key string }
	senders := make([]sender, n)
	for i := range senders {
		senders[i].hash, senders[i].key = env.CreateObject(t, nil)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var accepted atomic.Int64
	client := &http.Client{Timeout: 30 * time.Second}
	post := func(method, path, key string, body any) {
		raw, _ := json.Marshal(body)
		req, err := http.NewRequestWithContext(ctx, method, env.URL+path, bytes.NewReader(raw))
		if err != nil {
			return
		}
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := client.Do(req)
		if err != nil {
			return // the burst's end cancels requests under way
		}
		_ = resp.Body.Close()
		if resp.StatusCode/100 == 2 {
			accepted.Add(1)
		}
	}
	for _, s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				post("POST", "/api/messages", "", map[string]any{"from_hash": s.hash, "to_hash": to, "kind": "note", "body": "burst"})
				if withContext && i%2 == 0 {
					post("PUT", "/api/objects/"+s.hash+"/llm.txt", s.key, map[string]any{"body": "# burst\n"})
				}
			}
		}()
	}
	return func() int64 {
		cancel()
		wg.Wait()
		return accepted.Load()
	}
}

// attempt is one write of the party a control is aimed at.
type attempt struct {
	surface string
	do      func() *Response
}

// judgeAfter runs the attempts in turn, over and over, for d, and fails on any that is accepted:
// every one of them starts after the control's answer. A refusal is the control's own code
// (want) or, while the owner cannot be asked, 503 UNAVAILABLE with Retry-After.
func judgeAfter(t *testing.T, d time.Duration, want map[string]string, attempts []attempt) {
	t.Helper()
	refused := map[string]int{}
	unavailable := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		for _, a := range attempts {
			r := a.do()
			switch {
			case r.Status/100 == 2:
				t.Fatalf("%s after the control's answer was accepted: %d %s", a.surface, r.Status, r.Body)
			case r.Status == http.StatusServiceUnavailable:
				r.ExpectError(t, http.StatusServiceUnavailable, "UNAVAILABLE")
				if r.Header.Get("Retry-After") == "" {
					t.Fatalf("%s: 503 without Retry-After", a.surface)
				}
				unavailable++
			default:
				r.ExpectError(t, http.StatusForbidden, want[a.surface])
				refused[a.surface]++
			}
		}
	}
	for _, a := range attempts {
		if refused[a.surface] == 0 {
			t.Errorf("%s: no attempt was refused by the control itself (%d answered 503)", a.surface, unavailable)
		}
	}
	t.Logf("refused after the control: %v; 503 while the owner could not be asked: %d", refused, unavailable)
}

// TestBlockBindsAtItsAnswerMidBurst: while 16 senders flood the victim's mailbox, so that its
// sender.blocked queues behind thousands of message events, the victim blocks a party it shares a
// thread with; from the block's 201 not one write of that party is accepted on any surface: a
// message, a feed publish, a graph node, an edge and a decision in the shared thread.
func TestBlockBindsAtItsAnswerMidBurst(t *testing.T) {
	t.Parallel()
	env := Start(t)
	victim, victimKey := env.CreateObject(t, nil)
	party, partyKey := env.CreateObject(t, nil)
	enableFeed(t, env, victim, victimKey)
	threadID := Str(t, sendMessage(t, env, party, victim, "", "hello"), "thread_id")
	base := "/api/threads/" + threadID
	n1 := Str(t, env.Do(t, "POST", base+"/nodes", partyKey, map[string]any{"type": "question", "body": "a?"}).Expect(t, 201).JSON(t), "id")
	n2 := Str(t, env.Do(t, "POST", base+"/nodes", partyKey, map[string]any{"type": "question", "body": "b?"}).Expect(t, 201).JSON(t), "id")
	env.Do(t, "POST", "/api/feeds/"+victim+"/items", partyKey, map[string]any{"title": "before", "body": "b"}).Expect(t, 201)

	stop := burst(t, env, 16, victim, false)
	time.Sleep(4 * time.Second) // a backlog builds up ahead of the block
	env.Do(t, "POST", "/api/objects/"+victim+"/sender-blocks", victimKey, map[string]any{"blocked_hash": party}).Expect(t, 201)
	judgeAfter(t, 8*time.Second, map[string]string{
		"message": "SENDER_BLOCKED", "feed publish": "SENDER_BLOCKED", "graph node": "SENDER_BLOCKED",
		"graph edge": "SENDER_BLOCKED", "decision": "SENDER_BLOCKED",
	}, []attempt{
		{"message", func() *Response {
			return env.Do(t, "POST", "/api/messages", "", map[string]any{"from_hash": party, "to_hash": victim, "thread_id": threadID, "kind": "note", "body": "after"})
		}},
		{"feed publish", func() *Response {
			return env.Do(t, "POST", "/api/feeds/"+victim+"/items", partyKey, map[string]any{"title": "after", "body": "b"})
		}},
		{"graph node", func() *Response {
			return env.Do(t, "POST", base+"/nodes", partyKey, map[string]any{"type": "question", "body": "after?"})
		}},
		{"graph edge", func() *Response {
			return env.Do(t, "POST", base+"/edges", partyKey, map[string]any{"from_node_id": n1, "to_node_id": n2, "type": "supports"})
		}},
		{"decision", func() *Response {
			return env.Do(t, "POST", base+"/decision", partyKey, map[string]any{"title": "after", "body": "b"})
		}},
	})
	t.Logf("burst: %d messages accepted", stop())

	// An unblock binds the same way: the party writes again at once.
	env.Do(t, "DELETE", "/api/objects/"+victim+"/sender-blocks/"+party, victimKey, nil).Expect(t, 200)
	env.Do(t, "POST", "/api/feeds/"+victim+"/items", partyKey, map[string]any{"title": "unblocked", "body": "b"}).Expect(t, 201)
	env.Do(t, "POST", base+"/nodes", partyKey, map[string]any{"type": "question", "body": "unblocked?"}).Expect(t, 201)
}

// TestRulesBindAtTheirAnswerMidBurst: while 16 senders flood the owner's mailbox and write their
// own contexts (a backlog on the topics mailbox-svc projects rules from), the owner closes its
// mailbox to unverified senders; from the rules' 200 not one unverified send is accepted, and
// reopening it binds the same way.
func TestRulesBindAtTheirAnswerMidBurst(t *testing.T) {
	t.Parallel()
	env := Start(t)
	owner, ownerKey := env.CreateObject(t, nil)
	party, _ := env.CreateObject(t, nil)
	threadID := Str(t, sendMessage(t, env, party, owner, "", "hello"), "thread_id")

	stop := burst(t, env, 16, owner, true)
	time.Sleep(4 * time.Second)
	env.Do(t, "PUT", "/api/objects/"+owner+"/rules", ownerKey,
		map[string]any{"body": `{"write":{"mailbox":"verified_only"}}`}).Expect(t, 200)
	judgeAfter(t, 8*time.Second, map[string]string{"reply": "SENDER_UNVERIFIED", "new thread": "SENDER_UNVERIFIED"}, []attempt{
		{"reply", func() *Response {
			return env.Do(t, "POST", "/api/messages", "", map[string]any{"from_hash": party, "to_hash": owner, "thread_id": threadID, "kind": "note", "body": "after"})
		}},
		{"new thread", func() *Response {
			return env.Do(t, "POST", "/api/messages", "", map[string]any{"from_hash": party, "to_hash": owner, "kind": "note", "body": "after"})
		}},
	})
	env.Do(t, "PUT", "/api/objects/"+owner+"/rules", ownerKey, map[string]any{"rules": nil}).Expect(t, 200)
	sendMessage(t, env, party, owner, threadID, "reopened")
	t.Logf("burst: %d writes accepted", stop())
}
