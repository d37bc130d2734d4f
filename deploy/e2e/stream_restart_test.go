package e2e

import (
	"bufio"
	"context"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sseEvent is one event of an SSE stream.
type sseEvent struct{ id, name, data string }

// sseStream is an SSE connection read line by line, as EventSource reads it.
type sseStream struct {
	cancel context.CancelFunc
	events chan sseEvent
}

// openStream connects to an event stream with the key, resuming after lastID ("" for none).
func openStream(t *testing.T, url, key, lastID string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("connect the event stream %s: %v %v", url, res, err)
	}
	s := &sseStream{cancel: cancel, events: make(chan sseEvent, 64)}
	go func() {
		defer res.Body.Close()
		defer close(s.events)
		var ev sseEvent
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "":
				if line == "" && (ev.data != "" || ev.name != "") {
					s.events <- ev
					ev = sseEvent{}
				}
			case "id":
				ev.id = value
			case "event":
				ev.name = value
			case "data":
				ev.data += value
			}
		}
	}()
	t.Cleanup(s.close)
	return s
}

func (s *sseStream) close() { s.cancel() }

// next returns the stream's next message event; an event: lost fails the test.
func (s *sseStream) next(t *testing.T) sseEvent {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				t.Fatal("the event stream ended")
			}
			if ev.name == "lost" {
				t.Fatalf("the stream answered event: lost: %s", ev.data)
			}
			if ev.name == "message" {
				return ev
			}
		case <-deadline:
			t.Fatal("no message event on the stream within 30 s")
		}
	}
}

// TestStreamResumesAcrossAllinoneRestart: a client of an owner's event stream that stopped
// reading, then reconnects with Last-Event-ID after the all-in-one was stopped (SIGTERM) and
// started again, and again after it was killed (SIGKILL), receives exactly the events it missed,
// in order, and then what arrives next: the embedded Redis keeps the streams' buffer on disk.
func TestStreamResumesAcrossAllinoneRestart(t *testing.T) {
	bin := buildAllinone(t)
	dataDir, addr, log := t.TempDir(), freeAddr(t), &syncBuffer{}
	run := startAllinone(t, bin, dataDir, addr, "", log)
	e := crashEnv(t, addr, log)
	alice, aliceKey := e.CreateObject(t, nil)
	bob, _ := e.CreateObject(t, nil)
	streamURL := e.URL + "/api/objects/" + alice + "/events?types=message"

	// The client follows the stream until it has seen the first message, then stops reading.
	stream := openStream(t, streamURL, aliceKey, "")
	thread := Str(t, e.Do(t, "POST", "/api/messages", "", map[string]any{"from_hash": bob, "to_hash": alice, "kind": "note",
		"body": "seen"}).Expect(t, http.StatusCreated).JSON(t), "thread_id")
	last := stream.next(t).id
	stream.close()

	sent := 0
	send := func() any {
		sent++
		return e.Do(t, "POST", "/api/messages", "", map[string]any{"from_hash": bob, "to_hash": alice, "kind": "note",
			"thread_id": thread, "body": "message " + strconv.Itoa(sent)}).Expect(t, http.StatusCreated).JSON(t)["id"]
	}
	for _, how := range []string{"SIGTERM", "SIGKILL"} {
		missed := []any{send(), send(), send()}
		// They are in the stream's buffer (a long poll after the last event read sees them)
		// before the all-in-one goes down.
		e.Eventually(t, func() bool {
			res := e.Do(t, "GET", "/api/objects/"+alice+"/events?types=message&wait=5s&after="+last, aliceKey, nil).Expect(t, 200).JSON(t)
			return len(res["events"].([]any)) == len(missed)
		}, "the missed messages in the stream's buffer")
		if how == "SIGTERM" {
			run.stop(t)
		} else {
			run.kill()
		}
		run = startAllinone(t, bin, dataDir, addr, "", log)

		stream = openStream(t, streamURL, aliceKey, last)
		var got []any
		var ids []string
		for range missed {
			ev := stream.next(t)
			got = append(got, payloadOf(t, []byte(ev.data))["data"].(map[string]any)["message_id"])
			ids = append(ids, ev.id)
		}
		if !reflect.DeepEqual(got, missed) {
			t.Fatalf("after a %s and a restart, the stream resumed from %s with messages %v, want exactly %v in order",
				how, last, got, missed)
		}
		// And then what comes next, nothing in between.
		after := send()
		ev := stream.next(t)
		if id := payloadOf(t, []byte(ev.data))["data"].(map[string]any)["message_id"]; id != after {
			t.Fatalf("after the missed messages the stream carried %v, want the next one %v", id, after)
		}
		stream.close()
		last = ev.id
		t.Logf("%s: resumed with Last-Event-ID after the restart: %d missed events (%v), then the next", how, len(missed), ids)
	}
}
