package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// TestBackfillAdmissionsOnce: the backfill hands publish one context.admission per object whose
// current rules say something of admission, with the current version's rules, and nothing for
// an object without them; a second call finds the marker and publishes nothing.
func TestBackfillAdmissionsOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, outbox := newStore(t)
	created := &contract.Rules{ParticipantAdmission: &contract.RulesAdmission{Mode: "owner_approval"}}
	if _, err := st.Materialise(ctx, contract.Object{ObjectID: "obj_ruled", InitialLLMTxt: "# A\n", Rules: created}); err != nil {
		t.Fatal(err)
	}
	// A later write closes the mailbox: the backfill must tell that, not the creation's rules.
	closed := &contract.Rules{ParticipantAdmission: &contract.RulesAdmission{Mode: "closed"}}
	if _, _, err := st.Write(ctx, "obj_ruled", store.Edit{Change: store.ChangeRules, Outbox: outbox,
		Apply: func(p *store.Profile) error { p.Rules = closed; return nil }}); err != nil {
		t.Fatal(err)
	}
	materialise(t, st, "obj_plain")

	var published []events.Pending
	publish := func(_ context.Context, evs []events.Pending) error {
		published = append(published, evs...)
		return nil
	}
	n, err := st.BackfillAdmissions(ctx, publish)
	if err != nil || n != 1 || len(published) != 1 {
		t.Fatalf("backfill = %d, %v, published %d; want one event", n, err, len(published))
	}
	var ev events.Event
	if err := json.Unmarshal([]byte(published[0].Payload), &ev); err != nil {
		t.Fatal(err)
	}
	var d contract.ContextUpdatedData
	if err := ev.Decode(&d); err != nil {
		t.Fatal(err)
	}
	if ev.Type != events.ContextAdmission || ev.ObjectID != "obj_ruled" || d.Version != 2 || d.Admission == nil || d.Admission.Mode != "closed" {
		t.Fatalf("event %s of %s: %+v, want context.admission of obj_ruled at version 2, mode closed", ev.Type, ev.ObjectID, d)
	}
	if _, ok, _ := events.Public(ev); ok {
		t.Error("context.admission has a public payload")
	}
	if n, err := st.BackfillAdmissions(ctx, publish); err != nil || n != 0 || len(published) != 1 {
		t.Fatalf("second backfill = %d, %v; want nothing", n, err)
	}
}
