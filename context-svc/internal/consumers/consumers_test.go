package consumers_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/svcdev/svc/context-svc/internal/consumers"
	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func event(t *testing.T, typ, objectID string, data any) events.Event {
	t.Helper()
	raw, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	return events.Event{ID: "evt_" + typ, Type: typ, ObjectID: objectID, Data: raw}
}

func TestProjections(t *testing.T) {
	t.Parallel()
	st := store.New(testkit.Database(t, testkit.Backends(t), "context"), testkit.Logger(t))
	h := &consumers.Projections{Store: st}
	ctx := context.Background()

	created := event(t, events.ObjectCreated, "obj_c", contract.ObjectCreatedData{Object: contract.Object{
		ObjectID: "obj_c", Version: 1, InitialLLMTxt: "# Created\n", CreatedAt: "2026-01-02T03:04:05.000Z"}})
	for range 2 { // a redelivery changes nothing
		if err := h.Handle(ctx, created); err != nil {
			t.Fatalf("object.created: %v", err)
		}
	}
	p, err := st.Profile(ctx, "obj_c")
	if err != nil || p.Version != 1 || p.Title != "Created" {
		t.Fatalf("profile after object.created: got %+v, %v; want version 1 titled Created", p, err)
	}

	confidence := 0.8
	decided := event(t, events.DecisionRecorded, "obj_c", contract.DecisionRecordedData{
		ThreadID: "thr_1", NodeID: "node_1", Title: "Ship it", Confidence: &confidence, CreatedAt: "2026-01-03T00:00:00.000Z"})
	for range 2 {
		if err := h.Handle(ctx, decided); err != nil {
			t.Fatalf("decision.recorded: %v", err)
		}
	}
	got, err := st.RecentDecisions(ctx, "obj_c", 10)
	if err != nil || len(got) != 1 || got[0].Title != "Ship it" || got[0].CreatedAt.Year() != 2026 {
		t.Fatalf("decisions after a redelivered decision.recorded: got %+v, %v; want one, Ship it", got, err)
	}

	malformed := events.Event{ID: "evt_bad", Type: events.ObjectCreated, Data: json.RawMessage(`"not an object"`)}
	if err := h.Handle(ctx, malformed); !events.IsPermanent(err) {
		t.Fatalf("a malformed event: got %v, want a permanent error (dead-lettered, not retried)", err)
	}
}

// TestBlockedListProjection: the owner's blocked list follows mailbox-svc's block events, in block
// order, with the blocked senders' current hashes, and redeliveries change nothing.
func TestBlockedListProjection(t *testing.T) {
	t.Parallel()
	st := store.New(testkit.Database(t, testkit.Backends(t), "context"), testkit.Logger(t))
	h := &consumers.Projections{Store: st}
	ctx := context.Background()
	handle := func(typ, objectID string, data any) {
		t.Helper()
		for range 2 { // every event twice: a redelivery changes nothing
			if err := h.Handle(ctx, event(t, typ, objectID, data)); err != nil {
				t.Fatalf("%s: %v", typ, err)
			}
		}
	}
	blocked := func() []string {
		t.Helper()
		got, err := st.BlockedHashes(ctx, "obj_bob")
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	handle(events.SenderBlocked, "obj_bob", contract.SenderBlockData{SenderObjectID: "obj_carol", SenderHash: "svc_carol", At: "2026-01-01T00:00:00.000Z"})
	handle(events.SenderBlocked, "obj_bob", contract.SenderBlockData{SenderObjectID: "obj_alice", SenderHash: "svc_alice", At: "2026-01-01T00:00:01.000Z"})
	if got := blocked(); !slices.Equal(got, []string{"svc_carol", "svc_alice"}) {
		t.Fatalf("blocked %v, want [svc_carol svc_alice]", got)
	}
	handle(events.ObjectHashChanged, "obj_alice", contract.HashChangedData{Hash: "svc_ada", PreviousHash: "svc_alice"})
	handle(events.SenderUnblocked, "obj_bob", contract.SenderBlockData{SenderObjectID: "obj_carol", SenderHash: "svc_carol"})
	if got := blocked(); !slices.Equal(got, []string{"svc_ada"}) {
		t.Fatalf("after a hash change and an unblock: %v, want [svc_ada]", got)
	}
	if got, err := st.BlockedHashes(ctx, "obj_nobody"); err != nil || len(got) != 0 {
		t.Fatalf("an object without blocks: %v, %v", got, err)
	}
}
