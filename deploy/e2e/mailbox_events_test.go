package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// eventWatch collects the events published on some topics, read from Kafka as a consumer would.
type eventWatch struct {
	mu  sync.Mutex
	evs []events.Event
}

// watchMailboxEvents collects the events mailbox-svc publishes.
func watchMailboxEvents(t *testing.T, env *Env) *eventWatch {
	return watchTopics(t, env.Brokers, env.Name, events.TopicMailbox)
}

// watchTopics collects the events of topics, under the topic prefix name + ".".
func watchTopics(t *testing.T, brokers []string, name string, topics ...string) *eventWatch {
	t.Helper()
	prefixed := make([]string, len(topics))
	for i, topic := range topics {
		prefixed[i] = name + "." + topic
	}
	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: brokers, GroupID: name + ".e2e-watch",
		GroupTopics: prefixed, StartOffset: kafka.FirstOffset,
		MaxWait: 100 * time.Millisecond, HeartbeatInterval: 500 * time.Millisecond,
		SessionTimeout: 6 * time.Second, RebalanceTimeout: 6 * time.Second, JoinGroupBackoff: 250 * time.Millisecond,
	})
	ctx, cancel := context.WithCancel(context.Background())
	l := &eventWatch{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			msg, err := r.ReadMessage(ctx)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			var ev events.Event
			if json.Unmarshal(msg.Value, &ev) == nil {
				l.mu.Lock()
				l.evs = append(l.evs, ev)
				l.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = r.Close()
	})
	return l
}

// wait returns the first event of type typ whose data decodes into dst and satisfies match.
func (l *eventWatch) wait(t *testing.T, env *Env, typ string, dst any, match func() bool) events.Event {
	t.Helper()
	var found events.Event
	env.Eventually(t, func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		for _, ev := range l.evs {
			if ev.Type == typ && ev.Decode(dst) == nil && match() {
				found = ev
				return true
			}
		}
		return false
	}, typ+" is published")
	return found
}

func TestMailboxEvents(t *testing.T) {
	t.Parallel()
	env := Start(t)
	watch := watchMailboxEvents(t, env)
	alice, _ := env.CreateObject(t, nil)
	bob, bobKey := env.CreateObject(t, nil)
	carol, _ := env.CreateObject(t, nil)
	bobID := env.Internal(t, "identity-svc", "GET", "/internal/v1/resolve/"+bob)["object_id"].(string)

	resp := env.Do(t, "POST", "/api/messages", "", map[string]any{"from_hash": alice, "to_hash": bob, "kind": "question", "body": "Coffee?"}).Expect(t, http.StatusCreated)
	sent := resp.JSON(t)

	var thread contract.ThreadCreatedData
	ev := watch.wait(t, env, events.ThreadCreated, &thread, func() bool { return thread.ThreadID == sent["thread_id"] })
	if ev.ObjectID != bobID || ev.Hash != bob || len(thread.Participants) != 2 || thread.Participants[0].Hash != alice ||
		thread.Participants[1].ObjectID != bobID || thread.ParticipantAdmission != "open" {
		t.Fatalf("thread.created %+v with %+v", ev, thread)
	}
	var msg contract.MessageCreatedData
	ev = watch.wait(t, env, events.MessageCreated, &msg, func() bool { return msg.MessageID == sent["id"] })
	if ev.ObjectID != bobID || ev.RequestID != resp.Header.Get("X-Request-Id") || events.WebhookEvent(ev.Type) != events.WebhookMessage {
		t.Fatalf("message.created envelope %+v", ev)
	}
	if msg.ThreadID != sent["thread_id"] || msg.FromHash != alice || msg.ToHash != bob || msg.ToObjectID != bobID ||
		msg.Kind != "question" || msg.Body != "Coffee?" || msg.CreatedAt != sent["created_at"] {
		t.Fatalf("message.created data %+v, sent %v", msg, sent)
	}

	env.Do(t, "POST", "/api/objects/"+bob+"/sender-blocks", bobKey, map[string]any{"blocked_hash": carol}).Expect(t, 201)
	var block contract.SenderBlockData
	ev = watch.wait(t, env, events.SenderBlocked, &block, func() bool { return block.SenderHash == carol })
	if ev.ObjectID != bobID || block.SenderObjectID == "" || block.At == "" {
		t.Fatalf("sender.blocked %+v with %+v", ev, block)
	}
	env.Do(t, "DELETE", "/api/objects/"+bob+"/sender-blocks/"+carol, bobKey, nil).Expect(t, 200)
	var unblock contract.SenderBlockData
	watch.wait(t, env, events.SenderUnblocked, &unblock, func() bool { return unblock.SenderHash == carol })
}

// TestThreadsShowCurrentHashes changes a participant's hash and checks that threads show the new
// one, and that the previous hash still reaches the same thread.
func TestThreadsShowCurrentHashes(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, aliceKey := env.CreateObject(t, nil)
	bob, bobKey := env.CreateObject(t, nil)
	threadID := Str(t, sendMessage(t, env, alice, bob, "", "before"), "thread_id")
	env.Do(t, "POST", "/api/objects/claim-custom-hash", aliceKey, map[string]any{"username": "alice_m", "payment_reference": issueVoucher()}).Expect(t, 200)

	env.Eventually(t, func() bool {
		p := summaryOf(t, env, bob, bobKey, threadID)["participants"].([]any)
		return p[0] == "svc_alice_m" && p[1] == bob
	}, "the thread shows alice's new hash")
	reply := sendMessage(t, env, alice, bob, threadID, "sent with my previous hash")
	if reply["from_hash"] != "svc_alice_m" || reply["thread_id"] != threadID {
		t.Fatalf("a send from the previous hash answered %v", reply)
	}
	for _, m := range messagesOf(env.Do(t, "GET", "/api/threads/"+threadID, bobKey, nil).Expect(t, 200).JSON(t)) {
		if m["from_hash"] != "svc_alice_m" {
			t.Fatalf("message %v does not show alice's current hash", m)
		}
	}
	env.Do(t, "GET", "/api/objects/"+alice+"/mailbox", aliceKey, nil).Expect(t, 200)

	// Other services read who takes part in a thread from the internal thread view.
	view := env.Internal(t, "mailbox-svc", "GET", "/internal/v1/threads/"+threadID)
	aliceID := env.Internal(t, "identity-svc", "GET", "/internal/v1/resolve/svc_alice_m")["object_id"]
	p := view["participants"].([]any)
	if view["thread_id"] != threadID || view["status"] != "open" || len(p) != 2 ||
		p[0].(map[string]any)["object_id"] != aliceID || p[0].(map[string]any)["hash"] != "svc_alice_m" || p[1].(map[string]any)["hash"] != bob {
		t.Fatalf("internal thread view %v", view)
	}
}
