package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

type anyURL struct{}

func (anyURL) CheckURL(raw string) (*url.URL, error) { return url.Parse(raw) }

func newSubscriptions(t *testing.T, q Quotas) *Subscriptions {
	t.Helper()
	env := testkit.Backends(t)
	db := testkit.Database(t, env, "webhook")
	if err := mongox.EnsureIndexes(context.Background(), db, store.Indexes); err != nil {
		t.Fatal(err)
	}
	return &Subscriptions{Store: store.New(db), URLs: anyURL{}, Quotas: q}
}

// insertPlaced stores sub as a create does: with a place in each of its quotas, which is how
// listings and the fan-out find it.
func insertPlaced(t *testing.T, st SubscriptionStore, sub *store.Subscription) {
	t.Helper()
	ctx := context.Background()
	slots, err := (&Subscriptions{Store: st}).takeSlots(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	sub.Slots = slots
	if err := st.InsertSubscription(ctx, sub); err != nil {
		t.Fatal(err)
	}
}

func quotaExceeded(err error) bool {
	var he *apierr.Error
	return errors.As(err, &he) && he.Status == 409 && he.Code == CodeQuotaExceeded
}

// TestConcurrentCreatesNeverPassAQuota fires 32 creates at once at a quota of 10, for webhooks
// and for context subscriptions to one box: exactly 10 get in, the others are 409
// QUOTA_EXCEEDED; once one is deleted, its place is taken again.
func TestConcurrentCreatesNeverPassAQuota(t *testing.T) {
	t.Parallel()
	s := newSubscriptions(t, Quotas{WebhooksPerObject: 10, ContextPerBox: 10, ContextPerWatcher: 100})
	ctx := context.Background()
	box := &contract.Target{ObjectID: "obj_box", Hash: "svc_box"}
	for _, kind := range []string{store.KindWebhook, store.KindContext} {
		var mu sync.Mutex
		var made []*Created
		refused := 0
		var wg sync.WaitGroup
		for i := range 32 {
			wg.Go(func() {
				d := Draft{CallbackURL: fmt.Sprintf("https://example.com/%d", i)}
				var c *Created
				var err error
				if kind == store.KindWebhook {
					c, err = s.CreateWebhook(ctx, box, d)
				} else {
					c, err = s.CreateContextSubscription(ctx, &contract.Principal{ObjectID: fmt.Sprintf("obj_w%d", i)}, box, d)
				}
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					made = append(made, c)
				case quotaExceeded(err):
					refused++
				default:
					t.Errorf("create %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		if len(made) != 10 || refused != 22 {
			t.Fatalf("%s: %d created and %d refused of 32 at once; want 10 and 22", kind, len(made), refused)
		}
		var all []store.Subscription
		var err error
		if kind == store.KindWebhook {
			all, err = s.ListWebhooks(ctx, box, "", 100)
		} else {
			all, err = s.ListContextSubscriptions(ctx, box, "", 100)
		}
		if err != nil || len(all) != 10 {
			t.Fatalf("%s: %d stored (%v), want 10", kind, len(all), err)
		}
		if kind == store.KindWebhook {
			err = s.DeleteWebhook(ctx, box, made[0].ID)
		} else {
			err = s.DeleteContextSubscription(ctx, &contract.Principal{ObjectID: box.ObjectID}, box, made[0].ID)
		}
		if err != nil {
			t.Fatal(err)
		}
		if kind == store.KindWebhook {
			_, err = s.CreateWebhook(ctx, box, Draft{CallbackURL: "https://example.com/again"})
		} else {
			_, err = s.CreateContextSubscription(ctx, &contract.Principal{ObjectID: "obj_again"}, box, Draft{CallbackURL: "https://example.com/again"})
		}
		if err != nil {
			t.Fatalf("%s: create after a delete: %v", kind, err)
		}
	}
}

// TestStrangersNeverUseUpTheOwnersPlaces fills a box's context subscriptions with strangers'
// ones: the owner still creates webhooks, lists the strangers' subscriptions page by page and
// removes one, after which a stranger may subscribe again. A watcher is bounded over all boxes.
func TestStrangersNeverUseUpTheOwnersPlaces(t *testing.T) {
	t.Parallel()
	s := newSubscriptions(t, Quotas{WebhooksPerObject: 2, ContextPerBox: 5, ContextPerWatcher: 3})
	ctx := context.Background()
	box := &contract.Target{ObjectID: "obj_box", Hash: "svc_box"}
	owner := &contract.Principal{ObjectID: box.ObjectID}
	d := Draft{CallbackURL: "https://example.com/hook"}
	for i := range 5 {
		if _, err := s.CreateContextSubscription(ctx, &contract.Principal{ObjectID: fmt.Sprintf("obj_s%d", i)}, box, d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CreateContextSubscription(ctx, &contract.Principal{ObjectID: "obj_s9"}, box, d); !quotaExceeded(err) {
		t.Fatalf("a sixth context subscription to a box of 5: %v, want 409 QUOTA_EXCEEDED", err)
	}
	for range 2 {
		if _, err := s.CreateWebhook(ctx, box, d); err != nil {
			t.Fatalf("the owner's webhook with strangers filling its box: %v", err)
		}
	}
	if _, err := s.CreateWebhook(ctx, box, d); !quotaExceeded(err) {
		t.Fatalf("a third webhook with a quota of 2: %v, want 409 QUOTA_EXCEEDED", err)
	}

	var listed []store.Subscription
	after := ""
	for {
		page, err := s.ListContextSubscriptions(ctx, box, after, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 2 {
			t.Fatalf("a page of limit 2 held %d", len(page))
		}
		listed = append(listed, page...)
		if len(page) < 2 {
			break
		}
		after = page[1].ID
	}
	if len(listed) != 5 {
		t.Fatalf("the owner listed %d subscriptions to its box, want the 5 strangers'", len(listed))
	}
	stranger := &contract.Principal{ObjectID: "obj_s9"}
	if err := s.DeleteContextSubscription(ctx, stranger, box, listed[0].ID); err == nil {
		t.Fatal("a stranger deleted another's subscription")
	}
	if err := s.DeleteContextSubscription(ctx, owner, box, listed[0].ID); err != nil {
		t.Fatalf("the owner removing a stranger's subscription to its box: %v", err)
	}
	if _, err := s.CreateContextSubscription(ctx, stranger, box, d); err != nil {
		t.Fatalf("subscribing after the owner freed a place: %v", err)
	}

	watcher := &contract.Principal{ObjectID: "obj_watcher"}
	for i := range 3 {
		if _, err := s.CreateContextSubscription(ctx, watcher, &contract.Target{ObjectID: fmt.Sprintf("obj_b%d", i)}, d); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.CreateContextSubscription(ctx, watcher, &contract.Target{ObjectID: "obj_b9"}, d); !quotaExceeded(err) {
		t.Fatalf("a fourth subscription of a watcher with a quota of 3: %v, want 409 QUOTA_EXCEEDED", err)
	}
	if page, err := s.ListContextSubscriptions(ctx, &contract.Target{ObjectID: "obj_b9"}, "", 10); err != nil || len(page) != 0 {
		t.Fatalf("the refused subscription left %d on its box (%v)", len(page), err)
	}
}

// TestOneWatcherCannotTakeABox: one watcher's context subscriptions to one box stop at their own
// quota, well before the box's, so other watchers still find room; the watcher may still
// subscribe to other boxes.
func TestOneWatcherCannotTakeABox(t *testing.T) {
	t.Parallel()
	s := newSubscriptions(t, Quotas{WebhooksPerObject: 2, ContextPerBox: 100, ContextPerWatcher: 100, ContextPerWatcherPerBox: 10})
	ctx := context.Background()
	box := &contract.Target{ObjectID: "obj_box", Hash: "svc_box"}
	greedy := &contract.Principal{ObjectID: "obj_greedy", Hash: "svc_greedy"}
	d := Draft{CallbackURL: "https://example.com/hook"}
	for i := range 10 {
		if _, err := s.CreateContextSubscription(ctx, greedy, box, d); err != nil {
			t.Fatalf("subscription %d of 10: %v", i+1, err)
		}
	}
	_, err := s.CreateContextSubscription(ctx, greedy, box, d)
	var he *apierr.Error
	if !errors.As(err, &he) || he.Status != 409 || he.Code != CodeQuotaExceeded || !strings.Contains(he.Message, "10 context subscriptions to one box") {
		t.Fatalf("an 11th subscription of one watcher to one box: %v, want 409 QUOTA_EXCEEDED naming the quota", err)
	}
	if _, err := s.CreateContextSubscription(ctx, &contract.Principal{ObjectID: "obj_other"}, box, d); err != nil {
		t.Fatalf("another watcher of the box: %v", err)
	}
	if _, err := s.CreateContextSubscription(ctx, greedy, &contract.Target{ObjectID: "obj_box2"}, d); err != nil {
		t.Fatalf("the watcher on another box: %v", err)
	}
}
