package webhook

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/testkit"
	"github.com/svcdev/svc/pkg/versions"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// countingStore is the real store, counting the subscription queries that reach it.
type countingStore struct {
	*store.Store
	queries atomic.Int64
}

func (c *countingStore) SubscriptionsOf(ctx context.Context, objectID string, limit int) ([]store.Subscription, error) {
	c.queries.Add(1)
	return c.Store.SubscriptionsOf(ctx, objectID, limit)
}

// TestSubscriptionCacheFollowsWritesOfEveryReplica runs two replicas' caches over one store and
// one Redis: a warm list costs no store query, and a subscription or health write through either
// replica is seen by the other's next read.
func TestSubscriptionCacheFollowsWritesOfEveryReplica(t *testing.T) {
	t.Parallel()
	env := testkit.Backends(t)
	st := &countingStore{Store: store.New(testkit.Database(t, env, "webhook"))}
	opts, err := redis.ParseURL(env.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	tokens := versions.New(rdb, testkit.Logger(t), "test:subs:", TokenTTL)
	a, b := NewSubscriptionCache(st, tokens, 10), NewSubscriptionCache(st, tokens, 10)
	ctx := context.Background()
	list := func(c *SubscriptionCache) []string {
		t.Helper()
		subs, err := c.SubscriptionsTo(ctx, "obj_1")
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, s := range subs {
			ids = append(ids, s.Sub.ID)
		}
		return ids
	}
	owner := &contract.Target{ObjectID: "obj_1", Hash: "svc_1"}

	if got := list(a); len(got) != 0 {
		t.Fatalf("empty store lists %v", got)
	}
	before := st.queries.Load()
	for range 5 {
		list(a)
	}
	if n := st.queries.Load() - before; n != 0 {
		t.Errorf("a warm list queried the store %d times", n)
	}

	created, err := (&Subscriptions{Store: b, URLs: anyURL{}}).CreateWebhook(ctx, owner, Draft{CallbackURL: "https://example.com/"})
	if err != nil {
		t.Fatal(err)
	}
	id := created.ID
	if got := list(a); len(got) != 1 || got[0] != id {
		t.Fatalf("after another replica's insert: %v", got)
	}
	changed := *created.Subscription
	changed.Events = []string{"identifier"}
	if err := b.ReplaceSubscription(ctx, &changed); err != nil {
		t.Fatal(err)
	}
	if subs, _ := a.SubscriptionsTo(ctx, "obj_1"); len(subs) != 1 || subs[0].Sub.Events[0] != "identifier" {
		t.Fatalf("after another replica's update: %+v", subs)
	}
	// A health write through either replica (the sender's, an owner disabling) is seen too.
	now := time.Now()
	if err := b.PutHealth(ctx, &store.SubscriptionHealth{ID: id, ObjectID: "obj_1", DisabledAt: &now, DisabledReason: "test"}); err != nil {
		t.Fatal(err)
	}
	if subs, _ := a.SubscriptionsTo(ctx, "obj_1"); len(subs) != 1 || subs[0].Health.DisabledAt == nil {
		t.Fatalf("after another replica's health write: %+v", subs)
	}
	if err := b.DeleteSubscription(ctx, &changed); err != nil {
		t.Fatal(err)
	}
	if got := list(a); len(got) != 0 {
		t.Fatalf("after another replica's delete: %v", got)
	}
	if err := b.DeleteSubscription(ctx, &store.Subscription{ID: "whk_unknown", ObjectID: "obj_1", Kind: store.KindWebhook}); err != nil {
		t.Errorf("deleting an unknown subscription: %v", err)
	}
}
