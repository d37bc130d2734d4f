package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/pkg/controls"
	"github.com/svcdev/svc/pkg/testkit"
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
// message, a feed publish, a graph node, an edge and a decision in the shared thread. With the
// fresh check of feed-svc or graph-svc turned off (their BlockGuard nil) it fails: a feed publish
// or graph node goes in behind the block.
func TestBlockBindsAtItsAnswerMidBurst(t *testing.T) {
	t.Parallel()
	env := Start(t)
	victim, victimKey := env.CreateObject(t, nil)
	party, partyKey := env.CreateObject(t, nil)
	enableFeed(t, env, victim, victimKey)
	victimID := objectIDOf(t, env, victim)
	threadID := Str(t, sendMessage(t, env, party, victim, "", "hello"), "thread_id")
	base := "/api/threads/" + threadID
	n1 := Str(t, env.Do(t, "POST", base+"/nodes", partyKey, map[string]any{"type": "question", "body": "a?"}).Expect(t, 201).JSON(t), "id")
	n2 := Str(t, env.Do(t, "POST", base+"/nodes", partyKey, map[string]any{"type": "question", "body": "b?"}).Expect(t, 201).JSON(t), "id")
	env.Do(t, "POST", "/api/feeds/"+victim+"/items", partyKey, map[string]any{"title": "before", "body": "b"}).Expect(t, 201)

	stop := burst(t, env, 16, victim, false)
	time.Sleep(4 * time.Second) // a backlog builds up ahead of the block
	env.Do(t, "POST", "/api/objects/"+victim+"/sender-blocks", victimKey, map[string]any{"blocked_hash": party}).Expect(t, 201)
	// Whether the projections were behind the block at its 201 (they are under this burst on the
	// machines measured, and the test fails with the fresh check turned off): a figure, since a
	// machine fast enough to keep up proves less, and nothing more.
	for _, svc := range []string{"feed-svc", "graph-svc"} {
		current, applied := controlVersions(t, env, controls.Blocks, svc, victimID)
		t.Logf("%s had applied block version %d of %d at the block's 201", svc, applied, current)
	}
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
// own contexts, the owner closes its mailbox to unverified senders; from the rules' 200 not one
// unverified send is accepted, and reopening it binds the same way.
//
// The burst alone does not hold back the path a rules change travels: mailbox-svc projects rules
// from the context and identity topics, which messages do not load, and its admissions group
// keeps up with the senders' context writes (the projection had applied the rules 40 ms after
// their 200, before the first send was judged, so the test passed with the check turned off). So
// mailbox-svc is restarted, before the rules change, with its Kafka clients aimed at a broker that
// never answers, as under the longest backlog: its projection cannot apply the change at all, and
// the test checks, in the control versions in Redis, that it had not when the judging ended. Every
// refusal is then the fresh check's (pkg/controls), which asks context-svc.
func TestRulesBindAtTheirAnswerMidBurst(t *testing.T) {
	t.Parallel()
	env := Start(t)
	owner, ownerKey := env.CreateObject(t, nil)
	party, _ := env.CreateObject(t, nil)
	threadID := Str(t, sendMessage(t, env, party, owner, "", "hello"), "thread_id")
	ownerID := objectIDOf(t, env, owner)

	stop := burst(t, env, 16, owner, true)
	time.Sleep(4 * time.Second)
	ctx := context.Background()
	if err := env.Stack.RestartReplicaWith(ctx, "mailbox-svc", 0, map[string]string{"KAFKA_BROKERS": testkit.Silent(t)}); err != nil {
		t.Fatal(err)
	}
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
	if current, applied := controlVersions(t, env, controls.Rules, "mailbox-svc", ownerID); applied >= current {
		t.Fatalf("mailbox-svc's projection applied the rules (version %d of %d) while cut off from the broker: the refusals prove nothing", applied, current)
	}

	// Back on the broker, the projection catches up; reopening binds at its 200 all the same.
	if err := env.Stack.RestartReplicaWith(ctx, "mailbox-svc", 0, map[string]string{"KAFKA_BROKERS": strings.Join(env.Brokers, ",")}); err != nil {
		t.Fatal(err)
	}
	env.Do(t, "PUT", "/api/objects/"+owner+"/rules", ownerKey, map[string]any{"rules": nil}).Expect(t, 200)
	sendMessage(t, env, party, owner, threadID, "reopened")
	t.Logf("burst: %d writes accepted", stop())
	env.Eventually(t, func() bool {
		current, applied := controlVersions(t, env, controls.Rules, "mailbox-svc", ownerID)
		return applied >= current
	}, "mailbox-svc's projection applies the rules once back on the broker")
}

// objectIDOf returns the object id of a hash, as identity-svc resolves it.
func objectIDOf(t testing.TB, env *Env, hash string) string {
	t.Helper()
	var o struct {
		ObjectID string `json:"object_id"`
	}
	env.internal(t, "identity-svc", "GET", "/internal/v1/resolve/"+hash, true).Expect(t, 200).Decode(t, &o)
	if o.ObjectID == "" {
		t.Fatalf("identity-svc resolved %s without an object id", hash)
	}
	return o.ObjectID
}

// controlVersions returns an object's control version of kind and the one service's projection
// has applied, from the shared Redis (pkg/controls).
func controlVersions(t testing.TB, env *Env, kind, service, objectID string) (current, applied int64) {
	t.Helper()
	opts, err := redis.ParseURL(env.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	vals, err := rdb.MGet(context.Background(), controls.Key(kind, objectID), controls.AppliedKey(service, kind, objectID)).Result()
	if err != nil {
		t.Fatal(err)
	}
	n := func(v any) int64 {
		s, _ := v.(string)
		i, _ := strconv.ParseInt(s, 10, 64)
		return i
	}
	return n(vals[0]), n(vals[1])
}
