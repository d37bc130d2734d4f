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
