package webhook

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// TestAssignPlacesOnce: subscriptions stored by a release without quota places (two webhooks,
// and seven context subscriptions to a box whose quota is five, as counting then inserting could
// leave) are all listed and all reached by the fan-out after the migration; the box stays full
// for new creates, the owner's webhooks still have room, and a second run does nothing.
func TestAssignPlacesOnce(t *testing.T) {
	t.Parallel()
	s := newSubscriptions(t, Quotas{WebhooksPerObject: 3, ContextPerBox: 5, ContextPerWatcher: 10})
	ctx := context.Background()
	box := &contract.Target{ObjectID: "obj_box", Hash: "svc_box"}
	legacy := func(id, kind, creator string) {
		now := time.Now()
		sub := &store.Subscription{ID: id, Kind: kind, ObjectID: box.ObjectID, CreatorID: creator, CallbackURL: "https://example.com/" + id,
			Events: []string{"context_updated"}, Secrets: []store.Secret{{Value: "whsec_x", CreatedAt: now}}, CreatedAt: now, UpdatedAt: now}
		if err := s.Store.InsertSubscription(ctx, sub); err != nil {
			t.Fatal(err)
		}
	}
	legacy("whk_01", store.KindWebhook, box.ObjectID)
	legacy("whk_02", store.KindWebhook, box.ObjectID)
	for i := range 7 {
		legacy(fmt.Sprintf("csub_%02d", i), store.KindContext, "obj_w")
	}
	if hooks, _ := s.ListWebhooks(ctx, box, "", 50); len(hooks) != 0 {
		t.Fatalf("before the migration %d webhooks are listed; the test must start from unplaced ones", len(hooks))
	}

	n, err := s.AssignPlaces(ctx)
	if err != nil || n != 9 {
		t.Fatalf("AssignPlaces = %d, %v; want 9 placed", n, err)
	}
	hooks, err := s.ListWebhooks(ctx, box, "", 50)
	if err != nil || len(hooks) != 2 || hooks[0].ID != "whk_01" || hooks[1].ID != "whk_02" {
		t.Fatalf("webhooks after the migration: %v, %v; want whk_01, whk_02", ids(hooks), err)
	}
	subs, _, err := s.ListContextSubscriptions(ctx, box, 0, 50)
	if err != nil || len(subs) != 7 {
		t.Fatalf("context subscriptions after the migration: %v, %v; want all 7", ids(subs), err)
	}
	cache := &SubscriptionCache{Repository: s.Store.(*store.Store)}
	reached, err := cache.read(ctx, box.ObjectID)
	if err != nil || len(reached) != 9 {
		t.Fatalf("the fan-out reaches %d subscriptions (%v), want 9", len(reached), err)
	}
	if _, err := s.CreateContextSubscription(ctx, &contract.Principal{ObjectID: "obj_new"}, box, Draft{CallbackURL: "https://example.com/n"}); !quotaExceeded(err) {
		t.Fatalf("a context subscription to a box already past its quota: %v, want 409", err)
	}
	if _, err := s.CreateWebhook(ctx, box, Draft{CallbackURL: "https://example.com/h"}); err != nil {
		t.Fatalf("the owner's third webhook of 3: %v", err)
	}
	if n, err := s.AssignPlaces(ctx); err != nil || n != 0 {
		t.Fatalf("second AssignPlaces = %d, %v; want nothing", n, err)
	}
}

func ids(subs []store.Subscription) []string {
	var out []string
	for _, s := range subs {
		out = append(out, s.ID)
	}
	return out
}
