package rpc_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/svcdev/svc/pkg/rpc"
)

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
