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
	for _, ev := range []events.Event{
		changed,
		changed, // redelivered
		{Type: events.ObjectHashChanged, ObjectID: "obj_a", Data: []byte(`{"hash":`)},         // malformed: dropped
		{Type: events.ObjectHashChanged, ObjectID: "obj_a", Data: []byte(`{"hash":""}`)},      // no hash: dropped
		{Type: events.ObjectCreated, ObjectID: "obj_a", Data: []byte(`{"hash":"svc_other"}`)}, // not ours
	} {
		if err := h.Handle(ctx, ev); err != nil {
			t.Fatalf("Handle(%s): %v", ev.Type, err)
		}
	}
	got, err := st.Hashes(ctx, []string{"obj_a"})
	if err != nil || got["obj_a"] != "svc_new" {
		t.Fatalf("hash after the events = %v, %v; want svc_new", got, err)
	}
}
