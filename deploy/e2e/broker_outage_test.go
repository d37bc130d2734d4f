package e2e

import (
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/svcdev/svc/pkg/embedded"
	"github.com/svcdev/svc/pkg/events"
)

// brokerOutage is how long TestProjectionsCatchUpAfterABrokerOutage keeps the broker stopped.
const brokerOutage = 75 * time.Second

// TestProjectionsCatchUpAfterABrokerOutage runs the suite (deploy/stack, every service with its
// own clients, as the all-in-one runs it) on a durable broker of its own, pkg/embedded's kfake on
// a data directory, under 20 sends/s to four recipients, each with a webhook to a local
// receiver, and stops the broker for 75 s, then starts it again on the same directory and
// address. Every send acknowledged before and during the outage is kept; reads (a thread, a
// mailbox, a graph, the feed) answer throughout; and once the broker is back every projection
// catches up with every acknowledged send: its thread (mailbox-svc), its graph node (graph-svc),
// the feed's message count (feed-svc) and its webhook delivery (webhook-svc), with nothing
// dead-lettered. The target is 30 s after the broker's return; the test waits a generous
// five minutes and logs the time catching up took, and which consumer group or outbox was behind
// last (catchUpWatch), as figures: a timed bound on a loaded machine would fail for the
// machine's sake.
func TestProjectionsCatchUpAfterABrokerOutage(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	dir, addr := t.TempDir(), freeAddr(t)
	var k *embedded.Kafka
	var topics []string
	startBroker := func() {
		t.Helper()
		var err error
		k, err = embedded.StartKafka(embedded.KafkaOptions{DataDir: filepath.Join(dir, "kafka"), IDFile: filepath.Join(dir, "kafka-id"),
			Addr: addr, Topics: topics})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The deliveries' lease and timeout are the defaults: webhookEnv's short ones (for tests that
	// stop a replica mid-attempt) leave a first attempt half a second to start, so that a
	// backlog's first attempts would all wait for the schedule's poll, as no default stack does.
	env := webhookEnv(t, rcv, WithEnv("WEBHOOK_CLAIM_LEASE", "60s"), WithEnv("WEBHOOK_TIMEOUT", "15s"), WithBroker(func(prefix string) []string {
		topics = events.Topics(prefix)
		startBroker()
		// Registered before the suite's own clean-up, so it runs after the suite has stopped.
		t.Cleanup(func() { k.Stop() })
		return k.Brokers
	}))
	sender, recipients := crashSetup(t, env, rcv)
	rcv.waitFor(t, env, len(recipients)) // the opening messages: the whole path works before the outage

	load := startLoad(env.URL, sender, recipients, 20)
	time.Sleep(10 * time.Second)
	before := load.count()
	k.Stop()
	stopped := time.Now()
	reads := 0
	for time.Since(stopped) < brokerOutage {
		to := recipients[reads%len(recipients)]
		env.Do(t, "GET", "/api/threads/"+to[2]+"?limit=20", to[1], nil).Expect(t, http.StatusOK)
		env.Do(t, "GET", "/api/objects/"+to[0]+"/mailbox", to[1], nil).Expect(t, http.StatusOK)
		env.Do(t, "GET", "/api/threads/"+to[2]+"/graph?limit=20", to[1], nil).Expect(t, http.StatusOK)
		env.Do(t, "GET", "/api/feed", "", nil).Expect(t, http.StatusOK)
		env.Do(t, "GET", "/api/objects/"+to[0], "", nil).Expect(t, http.StatusOK)
		reads++
		time.Sleep(2 * time.Second)
	}
	during := load.count() - before
	startBroker()
	back := time.Now()
	watch := watchCatchUp(t, env)
	if k.Recovery != embedded.KafkaClean {
		t.Fatalf("the broker came back %s (%s), want clean", k.Recovery, k.Detail)
	}
	acked, refused := load.finish()
	if during == 0 {
		t.Fatalf("no send was acknowledged while the broker was down")
	}

	_, dups := verifyAckedWithin(t, env, rcv, acked, 5*time.Minute)
	caughtUp := time.Since(back)
	delivered := lastDelivery(rcv, acked).Sub(back)
	t.Logf("after the broker's return: %s", watch.stop())
	t.Logf("broker stopped %s under 20 sends/s: %d sends acknowledged (%d before the outage, %d during it, %d refused or failed), "+
		"%d rounds of reads answered meanwhile; after its return every webhook delivery arrived within %.1fs and every thread, "+
		"graph node and feed count had caught up within %.1fs (target 30s); %d duplicate deliveries",
		brokerOutage, len(acked), before, during, refused, reads, delivered.Seconds(), caughtUp.Seconds(), dups)

	var services []string
	for name := range env.Stack.Wiring() {
		services = append(services, name)
	}
	slices.Sort(services)
	noDeadLetters(t, env, services)
}

// lastDelivery is when the receiver got the last of the first deliveries of acked's messages.
func lastDelivery(rcv *receiver, acked []sent) time.Time {
	want := map[string]bool{}
	for _, m := range acked {
		want[m.id] = true
	}
	var last time.Time
	for _, r := range rcv.Got() {
		if id, _ := r.Payload.Data["message_id"].(string); r.Payload.Type == "message" && want[id] {
			delete(want, id)
			if r.At.After(last) {
				last = r.At
			}
		}
	}
	return last
}
