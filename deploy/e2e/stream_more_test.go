package e2e

import (
	"github.com/r3labs/sse/v2"

	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestEventStreamAcrossGatewayReplicas: a stream held through one gateway replica (and one
// feed-svc replica) sees a message written through the other gateway.
func TestEventStreamAcrossGatewayReplicas(t *testing.T) {
	t.Parallel()
	env := Start(t, WithReplicas("gateway", 2), WithReplicas("feed-svc", 2))
	if len(env.Stack.GatewayURLs) != 2 {
		t.Fatalf("gateway replicas: %v", env.Stack.GatewayURLs)
	}
	alice, aliceKey := env.CreateObject(t, nil)
	bob, _ := env.CreateObject(t, nil)
	// Two streams through the second gateway; feed-svc's replicas take them in turn.
	chans := []chan *sse.Event{}
	for range 2 {
		chans = append(chans, subscribe(t, sseClient(env.Stack.GatewayURLs[1]+"/api/objects/"+alice+"/events", aliceKey)))
	}
	sent := sendMessage(t, env, bob, alice, "", "through the first gateway") // env.URL is GatewayURLs[0]
	for i, ch := range chans {
		ev := next(t, ch, "message", 10*time.Second)
		if got := payloadOf(t, ev.Data)["data"].(map[string]any)["message_id"]; got != sent["id"] {
			t.Fatalf("stream %d: message %v, want %v", i, got, sent["id"])
		}
	}
}

// TestEventLongPollAndRetention covers the long poll twin and resumes past retention: after=<id>
// answers the events after it (JSON, checked against the OpenAPI document), wait holds the poll
// until an event arrives, types filters, and an unknown or expired id is answered with lost
// (SSE: a lost event) and the retained events.
func TestEventLongPollAndRetention(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, aliceKey := env.CreateObject(t, nil)
	bob, _ := env.CreateObject(t, nil)
	base := "/api/objects/" + alice + "/events"
	poll := func(query string) map[string]any {
		return env.Do(t, "GET", base+query, aliceKey, nil).Expect(t, http.StatusOK).JSON(t)
	}

	// An unknown id: lost, then everything retained, the object's creation first (once the
	// stream's consumer has appended it: the log follows the write, it is not part of it).
	var all map[string]any
	var evs []any
	env.Eventually(t, func() bool {
		all = poll("?after=evt_00000000000000000000000000")
		evs, _ = all["events"].([]any)
		return len(evs) > 0
	}, "the object's creation in its event stream")
	if all["lost"] == nil {
		t.Fatalf("after an unknown id: no lost notice: %v", all)
	}
	if evs[0].(map[string]any)["type"] != "identifier" {
		t.Fatalf("retained events after lost = %v, want the identifier event first", evs)
	}
	createdID := evs[0].(map[string]any)["id"].(string)
	if all["next_after"] != evs[len(evs)-1].(map[string]any)["id"] {
		t.Fatalf("next_after %v is not the last event's id", all["next_after"])
	}

	// A long poll waits for the next event.
	type answer struct {
		body map[string]any
		took time.Duration
	}
	done := make(chan answer, 1)
	go func() {
		start := time.Now()
		r := env.send(t, Request{Method: "GET", Path: base + "?types=message&wait=20s&after=" + createdID, Key: aliceKey})
		var m map[string]any
		_ = json.Unmarshal(r.Body, &m)
		done <- answer{m, time.Since(start)}
	}()
	time.Sleep(300 * time.Millisecond)
	msg := sendMessage(t, env, bob, alice, "", "wake the poll")
	var got answer
	select {
	case got = <-done:
	case <-time.After(25 * time.Second):
		t.Fatal("the long poll did not answer")
	}
	pevs, _ := got.body["events"].([]any)
	if len(pevs) != 1 || pevs[0].(map[string]any)["data"].(map[string]any)["message_id"] != msg["id"] {
		t.Fatalf("long poll answered %v, want the message", got.body)
	}
	if got.took > 15*time.Second {
		t.Errorf("long poll took %s: it waited out its wait instead of waking", got.took)
	}
	msgID := pevs[0].(map[string]any)["id"].(string)
	// Nothing after the newest: an empty answer once wait is over, next_after unchanged.
	empty := poll("?after=" + msgID + "&wait=200ms")
	if len(empty["events"].([]any)) != 0 || empty["next_after"] != msgID {
		t.Fatalf("poll after the newest event = %v", empty)
	}

	// SSE with a Last-Event-ID past retention: a lost event first, then the retained events.
	c := sseClient(env.URL+base, aliceKey)
	c.LastEventID.Store([]byte("evt_gone"))
	ch := subscribe(t, c)
	lost := next(t, ch, "lost", 5*time.Second)
	if !strings.Contains(string(lost.Data), `"last_event_id":"evt_gone"`) {
		t.Fatalf("lost event data = %s", lost.Data)
	}
	if first := next(t, ch, "identifier", 5*time.Second); string(first.ID) != createdID {
		t.Fatalf("first retained event %s, want %s", first.ID, createdID)
	}

	// Bad input: clear 400s.
	env.Do(t, "GET", base+"?types=message,thread.created", aliceKey, nil).ExpectError(t, 400, "INVALID_REQUEST")
	env.Do(t, "GET", base+"?after="+msgID+"&wait=31s", aliceKey, nil).ExpectError(t, 400, "INVALID_REQUEST")
	env.Do(t, "GET", base+"?after="+msgID+"&wait=soon", aliceKey, nil).ExpectError(t, 400, "INVALID_REQUEST")
	// Another object's key: refused as on every owner route.
	_, bobKey := env.CreateObject(t, nil)
	env.Do(t, "GET", base+"?after="+msgID, bobKey, nil).ExpectError(t, 403, "FORBIDDEN")
	env.Do(t, "GET", base+"?after="+msgID, "", nil).ExpectError(t, 401, "UNAUTHORIZED")
}

// TestEventStreamPerKeyCap: past RATE_STREAMS_PER_KEY open streams of one key, the next is 429
// with Retry-After; closing one frees its slot.
func TestEventStreamPerKeyCap(t *testing.T) {
	t.Parallel()
	env := Start(t, WithEnv("RATE_STREAMS_PER_KEY", "2"))
	alice, aliceKey := env.CreateObject(t, nil)
	url := env.URL + "/api/objects/" + alice + "/events"
	c1, c2 := sseClient(url, aliceKey), sseClient(url, aliceKey)
	ch1 := subscribe(t, c1)
	subscribe(t, c2)
	r := env.Do(t, "GET", "/api/objects/"+alice+"/events?after=x&wait=1s", aliceKey, nil)
	r.ExpectError(t, 429, "RATE_LIMITED")
	if r.Header.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	c1.Unsubscribe(ch1)
	env.Eventually(t, func() bool {
		return env.send(t, Request{Method: "GET", Path: "/api/objects/" + alice + "/events?after=x", Key: aliceKey}).Status == 200
	}, "a closed stream to free its slot")
}

// TestFeedStream follows the public network stream: a new public object arrives as a new_svc row
// whose id is the row's id in GET /api/feed; a private object never shows.
func TestFeedStream(t *testing.T) {
	t.Parallel()
	env := Start(t)
	ch := subscribe(t, sseClient(env.URL+"/api/feed/stream", ""))
	private, _ := env.CreateObject(t, map[string]any{"visibility": "private"})
	public, _ := env.CreateObject(t, nil)
	var row map[string]any
	var id string
	for row == nil {
		ev := next(t, ch, "new_svc", 10*time.Second)
		m := payloadOf(t, ev.Data)
		if m["hash"] == private {
			t.Fatalf("the private object's creation was streamed: %s", ev.Data)
		}
		if m["hash"] == public {
			row, id = m, string(ev.ID)
		}
	}
	if row["id"] != id {
		t.Fatalf("row id %v differs from the SSE id %s", row["id"], id)
	}
	env.Eventually(t, func() bool {
		feed := env.Do(t, "GET", "/api/feed?kind=new_svc", "", nil).Expect(t, 200).JSON(t)
		for _, it := range feed["items"].([]any) {
			if it.(map[string]any)["id"] == id {
				if !slices.Equal(keysOf(it.(map[string]any)), keysOf(row)) {
					t.Fatalf("feed row %v and streamed row %v differ in shape", it, row)
				}
				return true
			}
		}
		return false
	}, "GET /api/feed to show the streamed row")
}

func keysOf(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestEventCatalogCoversEveryEvent provokes each of the six events (a custom hash, a verified
// domain claim, a source, a context write, a message, a decision, a feed item) and checks every
// payload the object's stream retained against the catalog schema of its type.
func TestEventCatalogCoversEveryEvent(t *testing.T) {
	t.Parallel()
	d, p := startDNS(t), startPages(t)
	env := claimsEnv(t, d, p)
	cat := loadCatalog(t, env)
	alice, aliceKey := env.CreateObject(t, nil)
	bob, _ := env.CreateObject(t, nil)
	base := "/api/objects/" + alice
	env.Do(t, "POST", base+"/sources", aliceKey, map[string]any{"kind": "text", "title": "Note", "text": "a note"}).Expect(t, 201)
	env.Do(t, "PUT", base+"/llm.txt", aliceKey, map[string]any{"body": "# Alice\n\nBuilds parsers."}).Expect(t, 200)
	dom := createClaim(t, env, aliceKey, alice, "domain", "alice-catalog.test")
	d.set("alice-catalog.test", "svc-verification="+dom.Challenge.Token)
	if v := verifyClaim(t, env, aliceKey, dom.ID); v.Status != "verified" {
		t.Fatalf("verify the domain claim = %+v", v)
	}
	msg := sendMessage(t, env, bob, alice, "", "Friday?")
	env.Do(t, "POST", "/api/threads/"+Str(t, msg, "thread_id")+"/decision", aliceKey,
		map[string]any{"title": "Ship on Friday", "body": "Agreed.", "confidence": 0.9}).Expect(t, 201)
	env.Do(t, "POST", base+"/feed", aliceKey, map[string]any{}).Expect(t, 200)
	env.Do(t, "POST", "/api/feeds/"+alice+"/items", aliceKey, map[string]any{"title": "Shipped", "body": "v1", "tags": []string{"done"}}).Expect(t, 201)
	renamed := "catalog_" + strconv.FormatInt(time.Now().UnixNano()%1e9, 10)
	env.Do(t, "POST", "/api/objects/claim-custom-hash", aliceKey, map[string]any{"username": renamed, "payment_reference": issueVoucher()}).Expect(t, 200)

	want := []string{"identifier", "claim_verified", "context_source", "context_updated", "message", "decision"}
	var seen map[string]int
	env.Eventually(t, func() bool {
		all := env.Do(t, "GET", "/api/objects/"+alice+"/events?after=evt_none", aliceKey, nil).Expect(t, 200).JSON(t)
		seen = map[string]int{}
		for _, ev := range all["events"].([]any) {
			m := ev.(map[string]any)
			seen[m["type"].(string)]++
			if m["type"] == "identifier" && m["data"].(map[string]any)["change"] == "hash_changed" {
				seen["identifier/hash_changed"]++
			}
			if m["type"] == "context_updated" && m["data"].(map[string]any)["change"] == "feed_item_published" {
				seen["context_updated/feed_item_published"]++
			}
		}
		for _, w := range append(want, "identifier/hash_changed", "context_updated/feed_item_published") {
			if seen[w] == 0 {
				return false
			}
		}
		return true
	}, "every event type on the object's stream")
	all := env.Do(t, "GET", "/api/objects/"+alice+"/events?after=evt_none", aliceKey, nil).Expect(t, 200).JSON(t)
	for _, ev := range all["events"].([]any) {
		raw, _ := json.Marshal(ev)
		cat.check(t, "event "+ev.(map[string]any)["id"].(string), raw)
	}
	t.Logf("events checked: %v", seen)
}
