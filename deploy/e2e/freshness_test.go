package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/pkg/freshness"
)

// TestFrontDoorRefusesWritesWhileAProjectionIsBehind: while a consumer group reports a lag past
// LAG_LIMIT (here a report of a paused group, written where the consuming replicas write
// theirs), the public writes that feed the projections (a message, an A2A send, a feed item, a
// new object) are refused with 503 UNAVAILABLE and Retry-After, while reads, an owner's block and
// a graph write keep working; once the group is caught up they are taken again.
func TestFrontDoorRefusesWritesWhileAProjectionIsBehind(t *testing.T) {
	t.Parallel()
	env := Start(t, WithEnv("LAG_LIMIT", "2s"))
	box, boxKey := env.CreateObject(t, nil)
	sender, senderKey := env.CreateObject(t, nil)
	enableFeed(t, env, box, boxKey)
	threadID := Str(t, sendMessage(t, env, sender, box, "", "hello"), "thread_id")

	opts, err := redis.ParseURL(env.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	paused := freshness.NewReporter(rdb)
	if err := paused.Report(ctx, map[string]time.Duration{"graph-svc.messages": 9 * time.Second}, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	writes := []Request{
		{Method: "POST", Path: "/api/messages", Body: map[string]any{"from_hash": sender, "to_hash": box, "kind": "note", "body": "hi"}},
		{Method: "POST", Path: "/api/objects/" + box + "/a2a/message:send", Body: map[string]any{"message": map[string]any{
			"messageId": "m1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "hi"}}, "metadata": map[string]any{"from_hash": sender}}}},
		{Method: "POST", Path: "/api/feeds/" + box + "/items", Key: senderKey, Body: map[string]any{"title": "t", "body": "b"}},
		{Method: "POST", Path: "/api/objects", Body: map[string]any{}},
	}
	env.Eventually(t, func() bool {
		return env.Send(t, writes[0]).Status == http.StatusServiceUnavailable
	}, "the gateway sees the lag")
	for _, w := range writes {
		r := env.Send(t, w)
		r.ExpectError(t, http.StatusServiceUnavailable, "UNAVAILABLE")
		if secs, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || secs < 1 || secs > 30 {
			t.Fatalf("%s %s: Retry-After %q, want 1–30 seconds", w.Method, w.Path, r.Header.Get("Retry-After"))
		}
	}
	// Reads, an owner's control and the graph keep working.
	env.Do(t, "GET", "/api/objects/"+box, "", nil).Expect(t, 200)
	env.Do(t, "GET", "/api/threads/"+threadID, boxKey, nil).Expect(t, 200)
	env.Do(t, "GET", "/api/feeds/"+box+"/items", "", nil).Expect(t, 200)
	env.Do(t, "POST", "/api/threads/"+threadID+"/nodes", senderKey, map[string]any{"type": "question", "body": "?"}).Expect(t, 201)
	env.Do(t, "POST", "/api/objects/"+box+"/sender-blocks", boxKey, map[string]any{"blocked_hash": sender}).Expect(t, 201)
	env.Do(t, "DELETE", "/api/objects/"+box+"/sender-blocks/"+sender, boxKey, nil).Expect(t, 200)

	// The group caught up: its report is withdrawn, and the writes are taken again.
	if err := paused.Withdraw(ctx, []string{"graph-svc.messages"}); err != nil {
		t.Fatal(err)
	}
	env.Eventually(t, func() bool {
		return env.Send(t, writes[0]).Status == http.StatusCreated
	}, "the gateway takes messages again")
	env.Send(t, writes[2]).Expect(t, http.StatusCreated)
	env.Send(t, writes[3]).Expect(t, http.StatusCreated)
}

// TestConsumerLagGauge: every consuming service exports svc_consumer_lag_seconds for each of its
// consumer groups on /metrics, and reports it to the gateway through the shared hash.
func TestConsumerLagGauge(t *testing.T) {
	t.Parallel()
	env := Start(t)
	a, _ := env.CreateObject(t, nil)
	b, _ := env.CreateObject(t, nil)
	sendMessage(t, env, a, b, "", "hello")
	wiring := env.Stack.Wiring()
	for name, urls := range env.Stack.ServiceURLs {
		if len(wiring[name].Consumes) == 0 {
			continue
		}
		resp, err := http.Get(strings.Split(urls, ",")[0] + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := `svc_consumer_lag_seconds{group="`
		if !strings.Contains(string(body), want) || !strings.Contains(string(body), `service="`+name+`"`) {
			t.Errorf("%s /metrics has no svc_consumer_lag_seconds of its groups", name)
		}
	}
	opts, err := redis.ParseURL(env.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	env.Eventually(t, func() bool {
		fields, err := rdb.HKeys(context.Background(), freshness.Key).Result()
		if err != nil {
			return false
		}
		reported := map[string]bool{}
		for _, f := range fields {
			service, _, _ := strings.Cut(f, ".")
			reported[service] = true
		}
		for name := range env.Stack.ServiceURLs {
			if len(wiring[name].Consumes) > 0 && !reported[name] {
				return false
			}
		}
		return true
	}, "every consuming service reports its groups' lag to "+freshness.Key)
}

// TestProbesFreshMidBurst: 16 unthrottled senders write to one recipient for 20 s through the
// front door (LAG_LIMIT 2 s), each in a thread of its own, while a probe sender writes to the same
// recipient about once a second; the probes' message events queue on the recipient's partition
// behind the burst's. It asserts what the design guarantees, and measures the rest:
//
//   - A probe is listed in the recipient's mailbox at its 201 (mailbox-svc writes the listing in
//     the send's own request): the first read after the 201 must show it.
//   - Every accepted probe's graph node and stream event appear (the test fails on one that never
//     does, within a generous two minutes after the burst); the time from the 201 to each is
//     logged, with its p50 and p99. The 1 s p99 is not asserted: a timed assertion on a loaded
//     machine fails for the machine's sake. Nor is "within LAG_LIMIT plus the lag's reporting
//     period" asserted, because the design does not guarantee it: the front door closes once the
//     oldest unhandled event of a group is LAG_LIMIT old (as reported every 250 ms and read by the
//     gateway at most that often), which stops the backlog from growing, but a write accepted just
//     before that still waits for every event ahead of it, and those arrived faster than the group
//     handles them; an event still in its outbox is not counted as lag; and the stream's last leg
//     (feed-svc's stream log to the open connection) comes after the consumer. The bound is a
//     regulation, not a per-write promise (make bench-fresh's overload burst, LAG_LIMIT 2 s,
//     measured graph nodes 5.5–6 s p99 behind their 201 on a loaded 2-core machine): make
//     bench-fresh measures, and prints, the rate at which all paths stay within 1 s p99.
//   - A send refused is 503 UNAVAILABLE with Retry-After (the share is logged; whether the burst
//     passes capacity depends on the machine, so no share is required), and every accepted send
//     is afterwards in its thread and the thread's graph.
func TestProbesFreshMidBurst(t *testing.T) {
	t.Parallel()
	env := Start(t, WithEnv("LAG_LIMIT", "2s"))
	box, boxKey := env.CreateObject(t, nil)
	prober, _ := env.CreateObject(t, nil)
	probeThread := Str(t, sendMessage(t, env, prober, box, "", "probe thread"), "thread_id")

	// The recipient's stream and the probe thread's graph are watched from the start; each records
	// when it first showed a probe.
	var mu sync.Mutex
	acked := map[string]time.Time{} // probe id → its 201
	seen := [2]map[string]time.Time{{}, {}}
	const graphPath, streamPath = 0, 1
	see := func(path int, id string) {
		mu.Lock()
		defer mu.Unlock()
		if _, ok := seen[path][id]; !ok {
			seen[path][id] = time.Now()
		}
	}
	events := subscribe(t, sseClient(env.URL+"/api/objects/"+box+"/events?types=message", boxKey))
	watch, stopWatching := context.WithCancel(context.Background())
	var watchers sync.WaitGroup
	watchers.Add(2)
	go func() {
		defer watchers.Done()
		for {
			select {
			case <-watch.Done():
				return
			case ev := <-events:
				var p struct {
					Data struct {
						MessageID string `json:"message_id"`
					} `json:"data"`
				}
				if json.Unmarshal(ev.Data, &p) == nil && p.Data.MessageID != "" {
					see(streamPath, p.Data.MessageID)
				}
			}
		}
	}()
	go func() {
		defer watchers.Done()
		client := &http.Client{Timeout: 30 * time.Second}
		for watch.Err() == nil {
			for _, id := range graphNodeMessages(watch, client, env.URL, boxKey, probeThread) {
				see(graphPath, id)
			}
			sleepFor(watch, 100*time.Millisecond)
		}
	}()
	defer func() {
		stopWatching()
		watchers.Wait()
	}()

	load := startBurst(t, env, 16, box, boxKey)
	var probes []string
	probeRefused := 0
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(time.Second) {
		r := env.Do(t, "POST", "/api/messages", "", map[string]any{"from_hash": prober, "to_hash": box, "thread_id": probeThread, "kind": "note", "body": "probe"})
		if r.Status == http.StatusServiceUnavailable {
			r.ExpectError(t, http.StatusServiceUnavailable, "UNAVAILABLE")
			if r.Header.Get("Retry-After") == "" {
				t.Fatalf("a probe refused without Retry-After")
			}
			probeRefused++
			continue
		}
		id := Str(t, r.Expect(t, http.StatusCreated).JSON(t), "id")
		mu.Lock()
		acked[id] = time.Now()
		mu.Unlock()
		probes = append(probes, id)
		// Listed at its 201: the thread leads with its new count on the first read.
		if n := mailboxCount(t, env, box, boxKey, probeThread); n < len(probes)+1 {
			t.Fatalf("probe %d is not listed in the recipient's mailbox at its 201: the thread counts %d messages, want %d", len(probes), n, len(probes)+1)
		}
	}
	sent, refused := load.finish(t)
	t.Logf("burst: %d sends accepted, %d refused with 503 and Retry-After (%.0f%%); probes: %d accepted, %d refused",
		len(sent), refused, 100*float64(refused)/float64(max(1, len(sent)+refused)), len(probes), probeRefused)
	if len(probes) == 0 {
		t.Fatalf("no probe was accepted in 20 s: the front door stayed closed")
	}

	// Every accepted probe shows on both paths, however long the backlog takes to drain.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		mu.Lock()
		missing := 0
		for _, id := range probes {
			for path := range seen {
				if _, ok := seen[path][id]; !ok {
					missing++
				}
			}
		}
		mu.Unlock()
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d probe paths (graph node, stream event) never showed\n%s", missing, env.problems(40))
		}
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	for path, name := range []string{"graph node", "stream event"} {
		var lat []time.Duration
		for _, id := range probes {
			lat = append(lat, max(0, seen[path][id].Sub(acked[id])))
		}
		slices.Sort(lat)
		t.Logf("probe → %s: p50 %s, p99 %s, max %s over %d probes (LAG_LIMIT 2s)", name,
			lat[len(lat)/2].Round(time.Millisecond), lat[min(len(lat)-1, len(lat)*99/100)].Round(time.Millisecond),
			lat[len(lat)-1].Round(time.Millisecond), len(lat))
	}
	mu.Unlock()

	// Every accepted send is readable: in its thread and the thread's graph.
	checkProjections(t, env, sent, time.Now().Add(2*time.Minute))
}

// burstLoad is a burst of senders, each writing to the recipient in a thread of its own as fast as
// the stack answers (no rate limit holds them: the test stacks' are off), waiting only the
// Retry-After of a 503; it keeps the sends answered 201 and counts the 503s.
type burstLoad struct {
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	mu      sync.Mutex
	acked   []sent
	refused int
	bad     []string // answers that are neither 201 nor a well-formed 503
}

// startBurst starts n senders to the recipient (hash to, key toKey), each in a thread it opens first.
func startBurst(t *testing.T, env *Env, n int, to, toKey string) *burstLoad {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	l := &burstLoad{cancel: cancel}
	client := &http.Client{Timeout: 30 * time.Second}
	// Every sender and thread first: once the burst runs, the front door may refuse both.
	type sender struct{ hash, thread string }
	senders := make([]sender, n)
	for i := range senders {
		senders[i].hash, _ = env.CreateObject(t, nil)
		senders[i].thread = Str(t, sendMessage(t, env, senders[i].hash, to, "", "opening"), "thread_id")
	}
	for _, s := range senders {
		from, thread := s.hash, s.thread
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for ctx.Err() == nil {
				if wait := l.send(ctx, client, env.URL, map[string]any{"from_hash": from, "to_hash": to, "thread_id": thread, "kind": "note", "body": "burst"}, to, toKey); wait > 0 {
					sleepFor(ctx, wait) // as the 503 asks: a client that retries at once only spins
				}
			}
		}()
	}
	return l
}

// send sends one message and returns how long the answer asks to wait before the next (its
// Retry-After), 0 for none.
func (l *burstLoad) send(ctx context.Context, client *http.Client, url string, body map[string]any, to, toKey string) time.Duration {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, "POST", url+"/api/messages", bytes.NewReader(raw))
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0 // the burst's end cancels requests under way
	}
	defer resp.Body.Close()
	var m struct {
		ID       string `json:"id"`
		ThreadID string `json:"thread_id"`
		Error    struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	decoded := json.NewDecoder(resp.Body).Decode(&m) == nil
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case resp.StatusCode == http.StatusCreated && decoded && m.ID != "":
		l.acked = append(l.acked, sent{id: m.ID, thread: m.ThreadID, to: to, toKey: toKey})
	case resp.StatusCode == http.StatusServiceUnavailable && m.Error.Code == "UNAVAILABLE" && resp.Header.Get("Retry-After") != "":
		l.refused++
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return time.Duration(max(secs, 1)) * time.Second
	case ctx.Err() == nil:
		l.bad = append(l.bad, fmt.Sprintf("%d %s (Retry-After %q)", resp.StatusCode, m.Error.Code, resp.Header.Get("Retry-After")))
	}
	return 0
}

// finish stops the burst and returns the accepted sends and the count of 503s; it fails the test
// on any other answer (a 503 without Retry-After among them).
func (l *burstLoad) finish(t *testing.T) ([]sent, int) {
	t.Helper()
	l.cancel()
	l.wg.Wait()
	if len(l.bad) > 0 {
		t.Fatalf("%d burst sends answered neither 201 nor 503 UNAVAILABLE with Retry-After (first: %s)", len(l.bad), l.bad[0])
	}
	return l.acked, l.refused
}

// mailboxCount reads the owner's mailbox, page by page, and returns the message count of the
// thread (0 when it is not listed).
func mailboxCount(t *testing.T, env *Env, hash, key, threadID string) int {
	t.Helper()
	for cursor := ""; ; {
		page := env.Do(t, "GET", "/api/objects/"+hash+"/mailbox?limit=200"+cursor, key, nil).Expect(t, http.StatusOK).JSON(t)
		for _, th := range page["threads"].([]any) {
			if m := th.(map[string]any); m["id"] == threadID {
				return int(m["message_count"].(float64))
			}
		}
		next, _ := page["next_cursor"].(string)
		if next == "" {
			return 0
		}
		cursor = "&cursor=" + next
	}
}

// graphNodeMessages returns the message ids of a thread's graph nodes (every page), or none when
// a read fails; it runs outside the test's goroutine, so it does not fail the test.
func graphNodeMessages(ctx context.Context, client *http.Client, base, key, threadID string) []string {
	var out []string
	for cursor := ""; ; {
		req, err := http.NewRequestWithContext(ctx, "GET", base+"/api/threads/"+threadID+"/graph?limit=200"+cursor, nil)
		if err != nil {
			return out
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := client.Do(req)
		if err != nil {
			return out
		}
		var g struct {
			Nodes []struct {
				MessageID *string `json:"message_id"`
			} `json:"nodes"`
			NextCursor *string `json:"next_cursor"`
		}
		err = json.NewDecoder(resp.Body).Decode(&g)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return out
		}
		for _, n := range g.Nodes {
			if n.MessageID != nil {
				out = append(out, *n.MessageID)
			}
		}
		if g.NextCursor == nil || *g.NextCursor == "" {
			return out
		}
		cursor = "&cursor=" + *g.NextCursor
	}
}

// sleepFor waits d or until ctx ends.
func sleepFor(ctx context.Context, d time.Duration) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
}
