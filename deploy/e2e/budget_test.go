package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/event"

	"github.com/svcdev/svc/pkg/httpx"
)

// commandCounter records the store commands each request causes, by the request id that every
// service carries in the context of the work it does for a request (and forwards to the services
// it calls). The outbox relay and the consumers work outside any request, so their commands carry
// no request id and are counted apart, as background.
type commandCounter struct {
	mu         sync.Mutex
	byRequest  map[string][]string
	background map[string]int // by service, command and collection ("mailbox_svc.insert outbox")
	// backgroundInserts counts the background inserts: the consumers' writes, which the relay's
	// and the sweeps' periodic reads do not move.
	backgroundInserts int
}

func newCommandCounter() *commandCounter {
	return &commandCounter{byRequest: map[string][]string{}, background: map[string]int{}}
}

func (c *commandCounter) monitor() *event.CommandMonitor {
	return &event.CommandMonitor{Started: func(ctx context.Context, e *event.CommandStartedEvent) {
		c.mu.Lock()
		defer c.mu.Unlock()
		name := serviceOf(e.DatabaseName) + "." + e.CommandName + " " + collectionOf(e)
		rid := httpx.RequestIDFrom(ctx)
		if rid == "" {
			c.background[name]++
			if e.CommandName == "insert" {
				c.backgroundInserts++
			}
			return
		}
		c.byRequest[rid] = append(c.byRequest[rid], name)
	}}
}

// serviceOf shortens a test database name (<test>_mailbox_svc) to the service's (mailbox_svc).
func serviceOf(db string) string {
	parts := strings.Split(db, "_")
	return strings.Join(parts[max(0, len(parts)-2):], "_")
}

// collectionOf names the collection a command addresses (its first element's value).
func collectionOf(e *event.CommandStartedEvent) string {
	el, err := e.Command.IndexErr(0)
	if err != nil {
		return ""
	}
	s, _ := el.Value().StringValueOK()
	return s
}

// backgroundSnapshot is how many commands of each name the services sent outside any request so far.
func (c *commandCounter) backgroundSnapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.background))
	for k, v := range c.background {
		out[k] = v
	}
	return out
}

// quiet waits until the consumers have inserted nothing for a second: they have caught up.
func (c *commandCounter) quiet(t *testing.T) {
	t.Helper()
	last, still := -1, 0
	for range 600 { // a minute at most
		time.Sleep(100 * time.Millisecond)
		c.mu.Lock()
		now := c.backgroundInserts
		c.mu.Unlock()
		if now != last {
			last, still = now, 0
			continue
		}
		if still++; still >= 10 {
			return
		}
	}
	t.Fatalf("the consumers did not fall quiet within a minute")
}

func (c *commandCounter) of(rid string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.byRequest[rid]...)
}

// TestStoreCommandBudget runs each hot route once through the gateway and fails when it sends more
// store commands than its budget. Each budget is written beside its route, with what the commands
// are; a route that needs more must say why here.
func TestStoreCommandBudget(t *testing.T) {
	t.Parallel()
	counter := newCommandCounter()
	env := Start(t, WithCommandMonitor(counter.monitor()), WithEnv("RATE_FEED_POLL_INTERVAL", "15m"))
	alice, aliceKey := env.CreateObject(t, nil)
	bob, bobKey := env.CreateObject(t, nil)
	// bob's feed, read once with content: the next anonymous polls are refused or 304.
	enableFeed(t, env, bob, bobKey)
	publish(t, env, bob, bobKey, "news")
	polled := env.Do(t, "GET", "/api/feeds/"+bob+"/items", "", nil).Expect(t, 200)
	// carol's feed holds 6 items, one of them hidden, read once below; the network's feed and
	// public activity hold them too.
	carol, carolKey := env.CreateObject(t, nil)
	enableFeed(t, env, carol, carolKey)
	var hidden string
	for i := range 6 {
		hidden = Str(t, publish(t, env, carol, carolKey, fmt.Sprint("item ", i)), "id")
	}
	env.Do(t, "DELETE", "/api/feeds/"+carol+"/items/"+hidden, carolKey, nil).Expect(t, 200)
	env.Eventually(t, func() bool { // activity is projected after the rows of the network's feed
		m := env.Do(t, "GET", "/api/activity?limit=100", "", nil).Expect(t, 200).JSON(t)
		n := 0
		for _, a := range m["items"].([]any) {
			if a := a.(map[string]any); a["hash"] == carol && strings.Contains(fmt.Sprint(a["type"]), "item") {
				n++
			}
		}
		return n == 6
	}, "the network's feed shows carol's items")
	// The background work of the sends below, over all consumers, the relay and its sweeps, is
	// counted from a quiet stack until the consumers have caught up with them.
	counter.quiet(t)
	before := counter.backgroundSnapshot()
	first := sendMessage(t, env, alice, bob, "", "hello")
	thread := Str(t, first, "thread_id")
	// Warm what a first request fills (hash resolution and key caches), as a busy stack has.
	sendMessage(t, env, alice, bob, thread, "warm")
	// bob's mailbox holds 50 threads (this one last moved), and a thread of 50 messages to him.
	for i := range 48 {
		sendMessage(t, env, alice, bob, "", fmt.Sprint("filler ", i))
	}
	long := Str(t, sendMessage(t, env, alice, bob, "", "long 0"), "thread_id")
	for i := 1; i < 50; i++ {
		sendMessage(t, env, alice, bob, long, fmt.Sprint("long ", i))
	}
	sendMessage(t, env, alice, bob, thread, "warm again")
	counter.quiet(t)
	const sends = 101 // 51 new threads, 50 replies
	after := counter.backgroundSnapshot()
	background, backgroundBy := backgroundSince(before, after, sends)
	for _, p := range []string{"", "/llm.txt", "/agent-card.json"} {
		env.Do(t, "GET", "/api/objects/"+bob+p, "", nil).Expect(t, 200)
	}
	env.Do(t, "GET", "/api/objects/"+bob+"/keys", bobKey, nil).Expect(t, 200)
	// bob's relationship memory holds every message sent to him, projected by graph-svc.
	env.Eventually(t, func() bool {
		for q, n := range map[string]int{"filler": 48, "long": 50, "warm": 2} {
			m := env.Do(t, "GET", "/api/objects/"+bob+"/memory/search?limit=50&q="+q, bobKey, nil).Expect(t, 200).JSON(t)
			if len(m["hits"].([]any)) != n {
				return false
			}
		}
		return true
	}, "bob's memory holds the messages sent to him")

	cases := []struct {
		name    string
		method  string
		path    string
		key     string
		body    any
		want    int
		budget  int
		headers map[string]string
	}{
		// Hash resolution, the sender's key, the thread's participants (which never change) and
		// whether the recipient blocks the sender (under a token every block and unblock replaces)
		// come from caches. Reply: the thread (its latest message's hint and status), the event
		// staged in the outbox, the message insert (with the reference from its id, one command),
		// the thread's hint, the thread's new entries in both mailboxes (one insert) and the
		// deletion of the entries they replace (one delete).
		{name: "reply in an open thread", method: "POST", path: "/api/messages", want: 201, budget: 6,
			body: map[string]any{"from_hash": alice, "to_hash": bob, "kind": "note", "body": "reply", "thread_id": thread}},
		// New thread: the events staged in the outbox, the thread and message inserts, the entries
		// in both mailboxes. The recipient's admission comes from mailbox-svc's cache under a
		// token; the participants' hash records are stored once per object, not once per thread.
		{name: "new-thread send", method: "POST", path: "/api/messages", want: 201, budget: 6,
			body: map[string]any{"from_hash": alice, "to_hash": bob, "kind": "note", "body": "new"}},
		// identity-svc: the hash record, the object document and its facts (hash changes, profile
		// versions, claims: inserted apart so that concurrent writes cannot overwrite each other).
		{name: "public object read", method: "GET", path: "/api/objects/" + bob, want: 200, budget: 3},
		// context-svc: the object's head and two reads of its versions (the current one and the
		// profile it composes).
		{name: "llm.txt read", method: "GET", path: "/api/objects/" + bob + "/llm.txt", want: 200, budget: 3},
		{name: "agent card", method: "GET", path: "/api/objects/" + bob + "/agent-card.json", want: 200, budget: 3},
		// The object's keys list, one find of its range (bob has no sub-key; with some, one find
		// each of their revocations and last uses); the owner's key is verified from caches.
		{name: "owner keys", method: "GET", path: "/api/objects/" + bob + "/keys", key: bobKey, want: 200, budget: 3},
		// A page of 50 threads: one find of the mailbox's _id range, one of bob's read states of
		// those threads (by _id), one of the participants' hash records (by _id).
		{name: "mailbox page of 50", method: "GET", path: "/api/objects/" + bob + "/mailbox?limit=50", key: bobKey, want: 200, budget: 3},
		// A thread of 50 messages, read whole: the thread, one find of its _id range, both
		// participants' read states, the hash records. The first read also writes bob's read
		// state (one insert).
		{name: "first thread read", method: "GET", path: "/api/threads/" + long + "?limit=50", key: bobKey, want: 200, budget: 5},
		{name: "thread read of 50", method: "GET", path: "/api/threads/" + long + "?limit=50", key: bobKey, want: 200, budget: 4},
		// feed-svc's pages, whatever their length: whether the box is a feed, one find of the list's
		// _id range (hidden items are tombstones in it), one find of the authors by _id ($in).
		{name: "box feed page", method: "GET", path: "/api/feeds/" + carol + "/items?limit=20", want: 200, budget: 3},
		// The network's feed: its counter (the total: one find of its newest change), one find of
		// the list's _id range (hidden items are out of it; unique=1 reads the boxes' newest rows,
		// a range of its own), one find of the boxes and authors by _id ($in).
		{name: "network feed page", method: "GET", path: "/api/feed?limit=20", key: aliceKey, want: 200, budget: 3},
		{name: "network feed unique", method: "GET", path: "/api/feed?unique=1&limit=20", key: bobKey, want: 200, budget: 3},
		{name: "network items unique", method: "GET", path: "/api/feed?kind=item&unique=1&limit=20", key: carolKey, want: 200, budget: 3},
		{name: "activity page", method: "GET", path: "/api/activity?limit=20", want: 200, budget: 2},
		// Stats: one find of each counter's newest change. Analytics of 30 days: one find of the
		// object's per-day numbers.
		{name: "stats", method: "GET", path: "/api/stats", want: 200, budget: 3},
		{name: "analytics of 30 days", method: "GET", path: "/api/objects/" + carol + "/analytics?range=30d", key: carolKey, want: 200, budget: 1},
		// Memory search: one find of the caller's postings range per query term (each posting
		// carries what filtering needs and its term's count: its validity fact, the index's
		// stats), and one find by _id of the candidates' cards (their stems, what a hit shows)
		// and the hashes they name: 2 commands for one term, one more per term.
		{name: "memory search 1 term", method: "GET", path: "/api/objects/" + bob + "/memory/search?q=filler", key: bobKey, want: 200, budget: 2},
		{name: "memory search 2 terms", method: "GET", path: "/api/objects/" + bob + "/memory/search?q=filler+long", key: bobKey, want: 200, budget: 3},
		{name: "memory search 3 terms", method: "GET", path: "/api/objects/" + bob + "/memory/search?q=filler+long+warm", key: bobKey, want: 200, budget: 4},
		// Polite polling refuses an early poll, a made-up validator and answers a current one from
		// the feed's validator in Redis: no store command at all.
		{name: "refused poll", method: "GET", path: "/api/feeds/" + bob + "/items?limit=7", want: 429, budget: 0},
		{name: "refused bogus etag", method: "GET", path: "/api/feeds/" + bob + "/items", want: 429, budget: 0,
			headers: map[string]string{"If-None-Match": `"bogus"`}},
		{name: "poll not modified", method: "GET", path: "/api/feeds/" + bob + "/items", want: 304, budget: 0,
			headers: map[string]string{"If-None-Match": polled.Header.Get("ETag")}},
	}
	var report []string
	for i, c := range cases {
		rid := fmt.Sprintf("budget-%02d-%s", i, strings.ReplaceAll(c.name, " ", "-"))
		headers := map[string]string{httpx.HeaderRequestID: rid}
		for k, v := range c.headers {
			headers[k] = v
		}
		env.Send(t, Request{Method: c.method, Path: c.path, Key: c.key, Body: c.body, Headers: headers}).Expect(t, c.want)
		cmds := counter.of(rid)
		sort.Strings(cmds)
		report = append(report, fmt.Sprintf("%-24s %2d (budget %2d): %s", c.name, len(cmds), c.budget, strings.Join(cmds, ", ")))
		if len(cmds) > c.budget {
			t.Errorf("%s: %d store commands, budget %d:\n  %s", c.name, len(cmds), c.budget, strings.Join(cmds, "\n  "))
		}
		if len(cmds) == 0 && c.method == "POST" {
			t.Errorf("%s: no store command seen for a write; the counter does not see the services", c.name)
		}
	}
	t.Logf("store commands per request:\n%s", strings.Join(report, "\n"))
	// The background of a send, per service: what the consumers of its events and the outbox
	// relays do for it. The sends here go one at a time, so every consumer handles batches of a
	// single event: the dearest case, with no batching to share a command. The periodic reads of
	// the idle machinery (the relays' sweeps, webhook-svc's poll of due deliveries) are left out:
	// they follow the clock, not the sends, and the breakdown logged shows them. Each service's
	// budget is its cost at one event per batch, with a margin for the odd retried write; the
	// sum, logged, is the figure (8 in all), which consumers that batch reach and single
	// events do not yet (about 8.6).
	budgets := map[string]float64{
		// feed-svc: the message's activity entry (the mark of its counts), and one update command
		// with the $inc of the recipient's analytics and the upsert of the network's message
		// count's next sum.
		"feed_svc.": 2.3,
		// mailbox-svc: the relay's delete of the acknowledged entries, shared by the sends
		// acknowledged within 250 ms of each other.
		"mailbox_svc.": 1,
		// webhook-svc: nothing for a recipient without webhooks (its subscriptions, none, are
		// read once and kept).
		"webhook_svc.": 0.05,
		// graph-svc: one read of the batch's stored nodes (the previous messages' with them, whose
		// positions give the new ones'), one insert into the lists (the message's numbered and
		// graph entries, a new thread's entries in its participants' thread lists), one read and
		// one move of both participants' index stats and one insert of both's postings, the
		// node's insert: 6 for a reply, and the same for a batch of any size in any number of
		// threads. A new thread's first message reads no node (nothing of a thread recorded
		// by its batch was projected before) and adds the thread's record and its sender's
		// participation mark: 7. At one event per batch this mix (51 new threads, 50 replies)
		// costs 6.5; batches of the lagging consumer share commands (4.96 measured).
		"graph_svc.": 7,
	}
	var total float64
	for service, budget := range budgets {
		got := backgroundOf(before, after, service, sends)
		total += got
		if got > budget {
			t.Errorf("%s: a send costs %.2f store commands in the background, budget %.2f:\n%s", service, got, budget, backgroundBy)
		}
	}
	if rest := backgroundOf(before, after, "", sends) - total; rest > 0.05 {
		t.Errorf("services that a send should not concern send %.2f store commands per send in the background:\n%s", rest, backgroundBy)
	}
	t.Logf("background store commands per send: %.2f (the issue's budget: 8), %.2f but the periodic reads; by service, command and collection:\n%s",
		background, backgroundOf(before, after, "", sends), backgroundBy)
}

// backgroundOf is the background store commands service ("": every service) sent between two
// snapshots, per send, but the periodic reads.
func backgroundOf(before, after map[string]int, service string, sends int) float64 {
	n := 0
	for k, v := range after {
		if strings.HasPrefix(k, service) && !periodic(k) {
			n += v - before[k]
		}
	}
	return float64(n) / float64(sends)
}

// periodic says whether a background command is one an idle service sends on its clock: an
// outbox relay's sweep, webhook-svc's poll of due deliveries.
func periodic(name string) bool {
	return strings.HasSuffix(name, ".find outbox") || name == "webhook_svc.find schedule"
}

// backgroundSince is the background store commands sent since before, per send of sends, in
// total and by service, command and collection (the most frequent first, a line per service).
func backgroundSince(before, after map[string]int, sends int) (float64, string) {
	total := 0
	byService := map[string][]string{}
	serviceTotal := map[string]int{}
	names := make([]string, 0, len(after))
	for k := range after {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		di, dj := after[names[i]]-before[names[i]], after[names[j]]-before[names[j]]
		return di > dj || di == dj && names[i] < names[j]
	})
	for _, k := range names {
		d := after[k] - before[k]
		if d == 0 {
			continue
		}
		total += d
		service, rest, _ := strings.Cut(k, ".")
		serviceTotal[service] += d
		byService[service] = append(byService[service], fmt.Sprintf("%s %.2f", rest, float64(d)/float64(sends)))
	}
	var lines []string
	for service, parts := range byService {
		lines = append(lines, fmt.Sprintf("  %-12s %5.2f: %s", service, float64(serviceTotal[service])/float64(sends), strings.Join(parts, ", ")))
	}
	sort.Strings(lines)
	return float64(total) / float64(sends), strings.Join(lines, "\n")
}
