package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/r3labs/sse/v2"
	"gopkg.in/cenkalti/backoff.v1"
)

// sseClient is an EventSource client nobody here wrote (r3labs/sse), with the owner key and no
// endless reconnection (a refused stream fails the test).
func sseClient(url, key string) *sse.Client {
	c := sse.NewClient(url)
	if key != "" {
		c.Headers["Authorization"] = "Bearer " + key
	}
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxElapsedTime = 100*time.Millisecond, 2*time.Second
	c.ReconnectStrategy = b
	c.Connection = &http.Client{}
	return c
}

// subscribe connects c and returns the channel of its events; the connection ends with the test
// or with c.Unsubscribe.
func subscribe(t testing.TB, c *sse.Client) chan *sse.Event {
	t.Helper()
	ch := make(chan *sse.Event, 64)
	if err := c.SubscribeChanRawWithContext(context.Background(), ch); err != nil {
		t.Fatalf("connect the event stream %s: %v", c.URL, err)
	}
	t.Cleanup(func() { c.Unsubscribe(ch) })
	return ch
}

// next returns the next event named name (skipping retry-only and other events), failing after
// within.
func next(t testing.TB, ch chan *sse.Event, name string, within time.Duration) *sse.Event {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case ev := <-ch:
			if string(ev.Event) == name {
				return ev
			}
		case <-deadline:
			t.Fatalf("no %q event on the stream within %s", name, within)
		}
	}
}

// noMore fails if an event named name arrives within d.
func noMore(t testing.TB, ch chan *sse.Event, name string, d time.Duration) {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case ev := <-ch:
			if string(ev.Event) == name {
				t.Fatalf("unexpected %s event %s: %s", name, ev.ID, ev.Data)
			}
		case <-deadline:
			return
		}
	}
}

// TestEventStreamResumesWithWebhookIDs follows an owner's event stream with an EventSource
// client: a message event arrives within 1 s of POST /api/messages; after a disconnect, three
// more messages arrive on reconnection with Last-Event-ID, exactly and in order; every stream id
// is the webhook-id of the same event's delivery (Standard Webhooks verifier), with the same
// payload; the payloads match the catalog.
func TestEventStreamResumesWithWebhookIDs(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	env := webhookEnv(t, rcv)
	cat := loadCatalog(t, env)
	alice, aliceKey := env.CreateObject(t, nil)
	bob, _ := env.CreateObject(t, nil)
	_, secret := createWebhook(t, env, alice, aliceKey, map[string]any{"callback_url": rcv.URL("/hook"), "events": []string{"message"}})

	client := sseClient(env.URL+"/api/objects/"+alice+"/events?types=message", aliceKey)
	ch := subscribe(t, client)
	sent := time.Now()
	first := sendMessage(t, env, bob, alice, "", "one")
	answered := time.Now()
	ev := next(t, ch, "message", 5*time.Second)
	if took := time.Since(answered); took > time.Second {
		t.Errorf("the message event arrived %s after the POST's answer, want within 1 s", took)
	} else {
		t.Logf("POST /api/messages answered in %s; its stream event came %s later", answered.Sub(sent), took)
	}
	cat.check(t, "stream event "+string(ev.ID), ev.Data)
	streamed := map[string][]byte{string(ev.ID): ev.Data}
	if got := payloadOf(t, ev.Data)["data"].(map[string]any)["message_id"]; got != first["id"] {
		t.Fatalf("stream event is of message %v, want %v", got, first["id"])
	}
	client.Unsubscribe(ch)

	thread := Str(t, first, "thread_id")
	var want []any
	for _, body := range []string{"two", "three", "four"} {
		want = append(want, sendMessage(t, env, bob, alice, thread, body)["id"])
	}
	// The same client reconnects as EventSource does: with the id of the last event it saw.
	if last, _ := client.LastEventID.Load().([]byte); string(last) != string(ev.ID) {
		t.Fatalf("client's Last-Event-ID is %q, want %q", last, ev.ID)
	}
	ch = subscribe(t, client)
	var got []any
	for range 3 {
		ev := next(t, ch, "message", 10*time.Second)
		cat.check(t, "stream event "+string(ev.ID), ev.Data)
		if _, dup := streamed[string(ev.ID)]; dup {
			t.Fatalf("event %s streamed twice", ev.ID)
		}
		streamed[string(ev.ID)] = ev.Data
		got = append(got, payloadOf(t, ev.Data)["data"].(map[string]any)["message_id"])
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("resumed stream carried messages %v, want exactly %v in order", got, want)
	}
	noMore(t, ch, "message", 500*time.Millisecond)

	deliveries := rcv.waitFor(t, env, 4)
	for _, d := range deliveries {
		verify(t, secret, d)
		id := d.Header.Get("webhook-id")
		data, ok := streamed[id]
		if !ok {
			t.Fatalf("delivery webhook-id %s is not an id of the stream (%v)", id, slices.Collect(mapsKeys(streamed)))
		}
		if !reflect.DeepEqual(payloadOf(t, data), payloadOf(t, d.Body)) {
			t.Errorf("event %s: stream data %s differs from the delivery's body %s", id, data, d.Body)
		}
	}
	if len(deliveries) != len(streamed) {
		t.Errorf("%d deliveries for %d streamed events", len(deliveries), len(streamed))
	}
}

func payloadOf(t testing.TB, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("payload is not JSON: %s", raw)
	}
	return m
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
