package e2e

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/svcdev/svc/pkg/client"
)

// TestClientRoutesAreDocumented: every route pkg/client calls is an operation of the gateway's
// OpenAPI document, so the client cannot drift from the API.
func TestClientRoutesAreDocumented(t *testing.T) {
	t.Parallel()
	env := Start(t)
	paths := env.spec.Doc["paths"].(map[string]any)
	for _, r := range client.Routes {
		ops, ok := paths[r.Path].(map[string]any)
		if !ok || ops[strings.ToLower(r.Method)] == nil {
			t.Errorf("pkg/client calls %s %s, which the OpenAPI document does not have", r.Method, r.Path)
		}
	}
}

// TestClientLoop: the Go client creates two objects, sends, replies in the thread, lists the
// mailbox, reads the thread and watches for a new message, against a real suite; every answer is
// checked against the OpenAPI document.
func TestClientLoop(t *testing.T) {
	t.Parallel()
	env := Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	anon := client.New(env.URL, "")
	anon.HTTP.Transport = specChecked{t: t, env: env}
	ada, err := anon.CreateObject(ctx, client.NewObject{InitialLLMTxt: "# Ada"})
	if err != nil || ada.APIKey == "" {
		t.Fatalf("create: %+v, %v", ada, err)
	}
	bob, err := anon.CreateObject(ctx, client.NewObject{InitialLLMTxt: "# Bob"})
	if err != nil {
		t.Fatal(err)
	}
	first, err := anon.Send(ctx, client.NewMessage{FromHash: bob.Hash, ToHash: ada.Hash, Kind: "question", Body: "review?", IdempotencyKey: "k1"})
	if err != nil || first.ThreadID == "" {
		t.Fatalf("send: %+v, %v", first, err)
	}
	again, err := anon.Send(ctx, client.NewMessage{FromHash: bob.Hash, ToHash: ada.Hash, Kind: "question", Body: "review?", IdempotencyKey: "k1"})
	if err != nil || again.ID != first.ID {
		t.Fatalf("a retried send: %+v, %v; want message %s again", again, err, first.ID)
	}

	owner := client.New(env.URL, ada.APIKey)
	owner.HTTP.Transport = specChecked{t: t, env: env}
	// A send is listed in the recipient's mailbox when its 201 returns.
	box, err := owner.Mailbox(ctx, ada.Hash, "")
	if err != nil || len(box.Threads) != 1 || box.Threads[0].UnreadCount != 1 {
		t.Fatalf("mailbox right after the send: %+v, %v; want the thread, unread", box, err)
	}
	var shown []string
	watchCtx, stopWatch := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- owner.Watch(watchCtx, ada.Hash, 100*time.Millisecond, func(m client.Message) error {
			shown = append(shown, m.Body)
			if len(shown) == 2 {
				stopWatch()
			}
			return nil
		})
	}()
	if _, err := anon.Send(ctx, client.NewMessage{FromHash: bob.Hash, ToHash: ada.Hash, Kind: "note", Body: "PR 42", ThreadID: first.ThreadID}); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("watch ended with %v", err)
	}
	if len(shown) != 2 || shown[0] != "review?" || shown[1] != "PR 42" {
		t.Fatalf("watch showed %q, want each message once, in order", shown)
	}
	thread, err := owner.Thread(ctx, first.ThreadID, "")
	if err != nil || len(thread.Messages) != 2 || thread.UnreadCount != 0 {
		t.Fatalf("thread: %+v, %v", thread, err)
	}

	var apiErr *client.Error
	if _, err := anon.Mailbox(ctx, ada.Hash, ""); !errors.As(err, &apiErr) || apiErr.Status != 401 || apiErr.Code != "UNAUTHORIZED" {
		t.Fatalf("a mailbox read without a key: %v; want *client.Error 401 UNAUTHORIZED", err)
	}
}

// specChecked is a transport that checks every answer against the OpenAPI document.
type specChecked struct {
	t   *testing.T
	env *Env
}

func (s specChecked) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	s.env.spec.Check(s.t, &Response{Status: res.StatusCode, Header: res.Header, Body: body, method: req.Method, path: req.URL.RequestURI()})
	return res, nil
}
