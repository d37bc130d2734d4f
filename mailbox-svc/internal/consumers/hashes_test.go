package consumers_test

import (
	"context"
	"testing"

	"github.com/svcdev/svc/mailbox-svc/internal/consumers"
	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestHashChangesKeepHashesCurrent(t *testing.T) {
	t.Parallel()
	st := store.New(testkit.Database(t, testkit.Backends(t), "mailbox"))
	ctx := context.Background()
	h := &consumers.Hashes{Store: st}
	if err := st.RememberHash(ctx, "obj_a", "svc_old"); err != nil {
		t.Fatal(err)
	}
	changed := events.Event{Type: events.ObjectHashChanged, ObjectID: "obj_a", Data: []byte(`{"hash":"svc_new"}`)}
	other := events.Event{Type: events.ObjectCreated, ObjectID: "obj_a", Data: []byte(`{"hash":"svc_other"}`)}
	for _, ev := range []events.Event{changed, changed /* redelivered */, other /* not ours */} {
		if err := h.Handle(ctx, ev); err != nil {
			t.Fatalf("Handle(%s): %v", ev.Type, err)
		}
	}
	// A malformed event cannot get better by retrying: it is a permanent error (a dead letter).
	for _, data := range []string{`{"hash":`, `{"hash":""}`} {
		err := h.Handle(ctx, events.Event{Type: events.ObjectHashChanged, ObjectID: "obj_a", Data: []byte(data)})
		if !events.IsPermanent(err) {
			t.Fatalf("Handle(%s) = %v, want a permanent error", data, err)
		}
	}
	got, err := st.Hashes(ctx, []string{"obj_a"})
	if err != nil || got["obj_a"] != "svc_new" {
		t.Fatalf("hash after the events = %v, %v; want svc_new", got, err)
	}
}
