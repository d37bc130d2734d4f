package webhook

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// TestUpgradeListsAnEarlierStoreOnce writes subscriptions as earlier releases left them, found
// only through quota places or through nothing at all: two webhooks with places (and the reach
// record of their scope), and seven context subscriptions of one watcher to a box whose quota is
// five, without places (as counting then inserting could leave). After the upgrade all are
// listed and reached by the fan-out; the box and the watcher's quota on it stay full for new
// creates, the owner's webhooks still have room, and a second run does nothing.
func TestUpgradeListsAnEarlierStoreOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testkit.Database(t, testkit.Backends(t), "webhook")
	if err := mongox.EnsureIndexes(ctx, db, store.Indexes); err != nil {
		t.Fatal(err)
	}
	s := &Subscriptions{Store: store.New(db), URLs: anyURL{}, Quotas: Quotas{WebhooksPerObject: 3, ContextPerBox: 5, ContextPerWatcher: 10}}
	box := &contract.Target{ObjectID: "obj_box", Hash: "svc_box"}
	earlier := func(id, kind, creator string, slots ...string) {
		now := time.Now()
		sub := &store.Subscription{ID: id, Kind: kind, ObjectID: box.ObjectID, CreatorID: creator, CallbackURL: "https://example.com/" + id,
			Events: []string{"context_updated"}, Secrets: []store.Secret{{Value: "whsec_x", CreatedAt: now}}, CreatedAt: now, UpdatedAt: now, Slots: slots}
		if _, err := db.Collection(store.Subscriptions).InsertOne(ctx, sub); err != nil {
			t.Fatal(err)
		}
		for _, sl := range slots {
			if _, err := db.Collection(store.Slots).InsertOne(ctx, store.Slot{ID: sl, SubscriptionID: id, At: now}); err != nil {
				t.Fatal(err)
			}
		}
	}
	earlier("whk_01", store.KindWebhook, box.ObjectID, "webhooks:obj_box#1")
	earlier("whk_02", store.KindWebhook, box.ObjectID, "webhooks:obj_box#3")
	if _, err := db.Collection(store.Slots).InsertOne(ctx, map[string]any{"_id": "webhooks:obj_box#places", "places": 3}); err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		earlier(fmt.Sprintf("csub_%02d", i), store.KindContext, "obj_w")
	}
	if hooks, _ := s.ListWebhooks(ctx, box, "", 50); len(hooks) != 0 {
		t.Fatalf("before the upgrade %d webhooks are listed; the test must start from unlisted ones", len(hooks))
	}

	n, err := s.Upgrade(ctx)
	if err != nil || n != 9 {
		t.Fatalf("Upgrade = %d, %v; want 9 listed", n, err)
	}
	hooks, err := s.ListWebhooks(ctx, box, "", 50)
	if err != nil || len(hooks) != 2 || hooks[0].ID != "whk_01" || hooks[1].ID != "whk_02" {
		t.Fatalf("webhooks after the upgrade: %v, %v; want whk_01, whk_02", ids(hooks), err)
	}
	subs, err := s.ListContextSubscriptions(ctx, box, "", 50)
	if err != nil || len(subs) != 7 {
		t.Fatalf("context subscriptions after the upgrade: %v, %v; want all 7", ids(subs), err)
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
	if _, err := s.CreateWebhook(ctx, box, Draft{CallbackURL: "https://example.com/h4"}); !quotaExceeded(err) {
		t.Fatalf("a fourth webhook of 3: %v, want 409", err)
	}
	if n, err := s.Upgrade(ctx); err != nil || n != 0 {
		t.Fatalf("second Upgrade = %d, %v; want nothing", n, err)
	}
}

func ids(subs []store.Subscription) []string {
	var out []string
	for _, s := range subs {
		out = append(out, s.ID)
	}
	return out
}
