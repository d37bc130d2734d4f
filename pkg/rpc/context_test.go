package rpc_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/svcdev/svc/pkg/rpc"
)

func TestContextClientComposedProfile(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/internal/v1/objects/obj_a/profile" && r.URL.Query().Get("hash") == "svc_a b" {
			_, _ = w.Write([]byte(`{"markdown":"# A"}`))
			return
		}
		w.WriteHeader(http.StatusNotFound)
	}))
	t.Cleanup(srv.Close)
	c := rpc.NewContextClient(srv.URL, srv.Client())
	ctx := context.Background()

	if md, err := c.ComposedProfile(ctx, "obj_a", "svc_a b"); err != nil || md != "# A" {
		t.Fatalf("profile of obj_a: got %q, %v; want # A", md, err)
	}
	if _, err := c.ComposedProfile(ctx, "obj_unknown", "svc_u"); !errors.Is(err, rpc.ErrNotFound) {
		t.Fatalf("profile of an unknown object: got %v, want ErrNotFound", err)
	}
	if rpc.NewContextClient("", nil).Configured() {
		t.Fatal("a client without an address reports itself configured")
	}
}
