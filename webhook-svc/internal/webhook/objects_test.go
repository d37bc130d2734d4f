package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// unreachable is identity-svc down.
type unreachable struct{}

func (unreachable) Object(context.Context, string) (*contract.Object, error) {
	return nil, errors.New("identity-svc: connection refused")
}

// TestFanoutDecidesVisibilityWithoutIdentity fans out context updates of a public and a private
// box, each watched by a stranger, with identity-svc unreachable: the visibility comes from the
// projection fed by object.created events, so the public box's update is delivered, the private
// one's is not, and neither is an error; only a box the projection never saw needs identity-svc.
func TestFanoutDecidesVisibilityWithoutIdentity(t *testing.T) {
	t.Parallel()
	e := newSenderEnv(t)
	ctx := context.Background()
	e.fanout.Objects = unreachable{}
	now := clock.Now()
	for _, box := range []string{"obj_public", "obj_private", "obj_unknown"} {
		sub := &store.Subscription{ID: "csub_" + box, Kind: store.KindContext, ObjectID: box, CreatorID: "obj_watcher",
			CallbackURL: e.sub.CallbackURL, Events: ContextEvents, Secrets: e.sub.Secrets, CreatedAt: now, UpdatedAt: now}
		insertPlaced(t, e.subs, sub)
	}
	created := func(id, visibility string) events.Event {
		data, _ := json.Marshal(contract.ObjectCreatedData{Object: contract.Object{ObjectID: id, Hash: "svc_" + id, Visibility: contract.Visibility(visibility)}})
		return events.Event{ID: "evt_c_" + id, Type: events.ObjectCreated, ObjectID: id, Hash: "svc_" + id, Time: clock.Format(now), Data: data}
	}
	updated := func(id string) events.Event {
		data, _ := json.Marshal(map[string]any{"version": 2, "title": "news"})
		return events.Event{ID: "evt_u_" + id, Type: events.ContextUpdated, ObjectID: id, Hash: "svc_" + id, Time: clock.Format(now), Data: data}
	}
	batch := []events.Event{created("obj_public", "public"), created("obj_private", "private"), updated("obj_public"), updated("obj_private")}
	if err := e.fanout.Handle(ctx, batch); err != nil {
		t.Fatalf("fan-out with identity-svc unreachable: %v", err)
	}
	e.sender.busy.Wait()
	if d := e.delivery(t, "evt_u_obj_public.csub_obj_public"); d.Status != store.StatusSucceeded {
		t.Fatalf("the public box's update: %s, want delivered", d.Status)
	}
	if _, err := e.st.Delivery(ctx, "evt_u_obj_private.csub_obj_private"); err == nil {
		t.Fatal("the private box's update was delivered to a stranger")
	}
	if err := e.fanout.Handle(ctx, []events.Event{updated("obj_unknown")}); err == nil {
		t.Fatal("a box the projection never saw was delivered without asking identity-svc")
	}
}
