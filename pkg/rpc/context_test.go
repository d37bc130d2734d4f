package rpc_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/svcdev/svc/pkg/rpc"
)

func TestContextClientRules(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/internal/v1/objects/obj_a/rules":
			_, _ = w.Write([]byte(`{"participant_admission":{"mode":"approval"}}`))
		case "/internal/v1/objects/obj_none/rules":
			_, _ = w.Write([]byte(`null`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	c := rpc.NewContextClient(srv.URL, srv.Client())
	ctx := context.Background()

	rules, err := c.Rules(ctx, "obj_a")
	if err != nil || rules == nil || rules.ParticipantAdmission == nil || rules.ParticipantAdmission.Mode != "approval" {
		t.Fatalf("rules of obj_a: got %+v, %v; want participant_admission approval", rules, err)
	}
	if rules, err := c.Rules(ctx, "obj_none"); err != nil || rules != nil {
		t.Fatalf("rules of obj_none: got %+v, %v; want nil rules", rules, err)
	}
	if _, err := c.Rules(ctx, "obj_unknown"); !errors.Is(err, rpc.ErrNotFound) {
		t.Fatalf("rules of an unknown object: got %v, want ErrNotFound", err)
	}
	if rpc.NewContextClient("", nil).Configured() {
		t.Fatal("a client without an address reports itself configured")
	}
}
