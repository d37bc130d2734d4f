package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/svcdev/svc/mailbox-svc/internal/mailbox"
	"github.com/svcdev/svc/pkg/rpc"
	"github.com/svcdev/svc/pkg/testkit"
)

// TestAdmission runs a new thread's admission lookup against a stand-in for context-svc's
// internal rules route: any answer but a mode falls back to the default, and a slow context-svc
// never holds a send longer than the timeout.
func TestAdmission(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/internal/v1/objects/obj_approval/rules":
			_, _ = w.Write([]byte(`{"participant_admission":{"mode":"approval"},"read":{"llm_txt":"public"}}`))
		case "/internal/v1/objects/obj_norules/rules":
			_, _ = w.Write([]byte(`null`))
		case "/internal/v1/objects/obj_nosection/rules":
			_, _ = w.Write([]byte(`{"write":{"mailbox":"anyone"}}`))
		case "/internal/v1/objects/obj_broken/rules":
			w.WriteHeader(http.StatusInternalServerError)
		case "/internal/v1/objects/obj_slow/rules":
			<-release
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first: frees the slow handler so Close can return
	s := &mailbox.Sender{Rules: rpc.NewContextClient(srv.URL, srv.Client()),
		RulesTimeout: 100 * time.Millisecond, Log: testkit.Logger(t)}
	tests := map[string]string{
		"obj_approval":  "approval",
		"obj_norules":   "open",
		"obj_nosection": "open",
		"obj_broken":    "open",
		"obj_unknown":   "open",
		"obj_slow":      "open",
	}
	for id, want := range tests {
		start := time.Now()
		if got := s.Admission(context.Background(), id); got != want {
			t.Errorf("Admission(%s) = %q, want %q", id, got, want)
		}
		if elapsed := time.Since(start); elapsed > 2*time.Second {
			t.Errorf("Admission(%s) took %v: a slow context-svc must not hold a send", id, elapsed)
		}
	}
	if got := (&mailbox.Sender{}).Admission(context.Background(), "obj_approval"); got != "open" {
		t.Errorf("without context-svc, Admission = %q, want the default", got)
	}
}
