package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/svcdev/svc/mailbox-svc/internal/mailbox"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/rpc"
	"github.com/svcdev/svc/pkg/service"
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

// TestAdmissionCache: the admission mode is kept in Redis under the object's validator, so that
// repeated new threads do not call context-svc; a write that replaces the validator (as every
// context-svc write does before it answers) makes the next send ask again, also when the write
// lands while a lookup is under way; failed lookups are not kept.
func TestAdmissionCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, err := service.ConnectRedis(ctx, testkit.Backends(t).RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	etags := httpx.NewETags(rdb, testkit.Logger(t), time.Hour)

	var mu sync.Mutex
	mode, calls, status := "approval", 0, http.StatusOK
	var during func() // runs while context-svc answers
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if during != nil {
			during()
			during = nil
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"participant_admission":{"mode":"` + mode + `"}}`))
	}))
	t.Cleanup(srv.Close)
	s := &mailbox.Sender{Rules: rpc.NewContextClient(srv.URL, srv.Client()), RulesTimeout: 5 * time.Second, Log: testkit.Logger(t),
		Admissions: &mailbox.AdmissionCache{Redis: rdb, ETags: etags, TTL: time.Hour}}
	step := func(name, want string, wantCalls int) {
		t.Helper()
		got := s.Admission(ctx, "obj_r")
		mu.Lock()
		defer mu.Unlock()
		if got != want || calls != wantCalls {
			t.Fatalf("%s: Admission = %q after %d calls of context-svc; want %q after %d", name, got, calls, want, wantCalls)
		}
	}
	set := func(f func()) { mu.Lock(); defer mu.Unlock(); f() }

	step("first lookup", "approval", 1)
	step("repeated lookup", "approval", 1)
	set(func() { mode = "open" })
	etags.Changed(ctx, "obj_r") // a rules write
	step("after a write", "open", 2)
	step("repeated after a write", "open", 2)

	// A write that lands while the lookup is under way: the answer may predate it, so it is
	// not used again.
	set(func() { mode = "owner_approval"; during = func() { etags.Changed(ctx, "obj_r") } })
	etags.Changed(ctx, "obj_r")
	step("lookup racing a write", "owner_approval", 3)
	step("after the racing write", "owner_approval", 4)
	step("settled", "owner_approval", 4)

	// A validator that is gone (expired, or dropped by a write whose replacement failed).
	if err := rdb.Del(ctx, httpx.ETagKey("obj_r")).Err(); err != nil {
		t.Fatal(err)
	}
	step("without a validator", "owner_approval", 5)
	step("with the new validator", "owner_approval", 5)

	// A failed lookup gives the default and is not kept.
	set(func() { status = http.StatusInternalServerError })
	etags.Changed(ctx, "obj_r")
	step("context-svc failing", "open", 6)
	set(func() { status = http.StatusOK; mode = "approval" })
	step("context-svc back", "approval", 7)
	step("cached again", "approval", 7)
}
