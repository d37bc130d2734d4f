package rpc_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/svcdev/svc/pkg/rpc"
)

func TestMailboxBlockedHashes(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.EscapedPath() {
		case "/internal/v1/objects/obj_a/blocked":
			_, _ = w.Write([]byte(`{"blocked_hashes":["svc_one","svc_two"]}`))
		case "/internal/v1/objects/obj_none/blocked":
			_, _ = w.Write([]byte(`{"blocked_hashes":null}`))
		case "/internal/v1/objects/obj_broken/blocked":
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	c := rpc.NewMailboxClient(srv.URL, srv.Client())
	ctx := context.Background()
	for id, want := range map[string][]string{
		"obj_a": {"svc_one", "svc_two"}, "obj_none": {}, "obj_unknown": {}, "obj/../a": {},
	} {
		got, err := c.BlockedHashes(ctx, id)
		if err != nil || got == nil || !slices.Equal(got, want) {
			t.Errorf("BlockedHashes(%q) = %q, %v; want %q", id, got, err, want)
		}
	}
	var se *rpc.StatusError
	if _, err := c.BlockedHashes(ctx, "obj_broken"); !errors.As(err, &se) || se.Status != http.StatusServiceUnavailable {
		t.Errorf("a failing mailbox-svc: got %v, want a StatusError with 503", err)
	}
	if got, err := rpc.NewMailboxClient("", nil).BlockedHashes(ctx, "obj_a"); err != nil || got == nil || len(got) != 0 {
		t.Errorf("without mailbox-svc: got %q, %v; want an empty list", got, err)
	}
}

func TestMailboxThread(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.EscapedPath() != "/internal/v1/threads/thr_a%2Fb" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"thread_id":"thr_a/b","participants":[{"object_id":"obj_a","hash":"svc_a"},{"object_id":"obj_b","hash":"svc_b"}],"status":"open"}`))
	}))
	t.Cleanup(srv.Close)
	c := rpc.NewMailboxClient(srv.URL, srv.Client())
	th, err := c.Thread(context.Background(), "thr_a/b")
	if err != nil || th.ThreadID != "thr_a/b" || len(th.Participants) != 2 || th.Participants[1].Hash != "svc_b" {
		t.Fatalf("Thread = %+v, %v; want thr_a/b with svc_a and svc_b", th, err)
	}
	if _, err := c.Thread(context.Background(), "thr_other"); !errors.Is(err, rpc.ErrNotFound) {
		t.Errorf("an unknown thread: got %v, want ErrNotFound", err)
	}
}
