package webhook

import (
	"context"
	"time"

	"github.com/svcdev/svc/pkg/versions"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// Subscribers lists every subscription to an object's events, with its health.
type Subscribers interface {
	SubscriptionsTo(ctx context.Context, objectID string) ([]Subscriber, error)
}

// Subscriber is a subscription with its endpoint's health.
type Subscriber struct {
	Sub    store.Subscription
	Health store.SubscriptionHealth
}

// Repository is the whole store, which the subscription cache decorates for every use case.
type Repository interface {
	SubscriptionStore
	SendStore
	FanoutStore
}

// SubscriptionCache is the repository with each object's subscriptions and their health
// remembered in this replica (versions.Cache), so that fanning an event out costs a Redis read
// instead of store queries. Every subscription or health write through it replaces the object's
// token, in every replica at once.
type SubscriptionCache struct {
	Repository
	lists *versions.Cache[[]Subscriber]
}

// TokenTTL bounds how long an object's token lives; an expired one costs one store read.
const TokenTTL = 24 * time.Hour

// NewSubscriptionCache remembers the subscriptions of at most size objects.
func NewSubscriptionCache(repo Repository, tokens *versions.Tokens, size int) *SubscriptionCache {
	return &SubscriptionCache{Repository: repo, lists: versions.NewCache[[]Subscriber](tokens, size)}
}

// SubscriptionsTo lists the subscriptions to an object's events. Callers must not modify them.
func (c *SubscriptionCache) SubscriptionsTo(ctx context.Context, objectID string) ([]Subscriber, error) {
	return c.lists.Get(ctx, objectID, func(ctx context.Context) ([]Subscriber, error) { return c.read(ctx, objectID) })
}

// read finds an object's subscriptions (the owner's webhooks and the context subscriptions to
// the box) on its list, and their health: three finds, whatever the store holds for other
// objects. The quotas bound the list.
func (c *SubscriptionCache) read(ctx context.Context, objectID string) ([]Subscriber, error) {
	subs, err := c.Repository.SubscriptionsOf(ctx, objectID, 0)
	if err != nil || len(subs) == 0 {
		return nil, err
	}
	health, err := c.Repository.Healths(ctx, idsOf(subs, func(sub store.Subscription) string { return sub.ID }))
	if err != nil {
		return nil, err
	}
	out := make([]Subscriber, len(subs))
	for i, sub := range subs {
		out[i] = Subscriber{Sub: sub, Health: *health[sub.ID]}
	}
	return out, nil
}

// PutHealth writes a subscription's health and retires the cached list of its object.
func (c *SubscriptionCache) PutHealth(ctx context.Context, h *store.SubscriptionHealth) error {
	if h.ObjectID != "" {
		defer c.lists.Changed(ctx, h.ObjectID)
	}
	return c.Repository.PutHealth(ctx, h)
}

// InsertSubscription stores a new subscription and retires the cached list of its object.
func (c *SubscriptionCache) InsertSubscription(ctx context.Context, sub *store.Subscription) error {
	defer c.lists.Changed(ctx, sub.ObjectID)
	return c.Repository.InsertSubscription(ctx, sub)
}

// ReplaceSubscription rewrites a subscription and retires the cached list of its object.
func (c *SubscriptionCache) ReplaceSubscription(ctx context.Context, sub *store.Subscription) error {
	defer c.lists.Changed(ctx, sub.ObjectID)
	return c.Repository.ReplaceSubscription(ctx, sub)
}

// DeleteSubscription deletes a subscription and retires the cached list of its object.
func (c *SubscriptionCache) DeleteSubscription(ctx context.Context, sub *store.Subscription) error {
	defer c.lists.Changed(ctx, sub.ObjectID)
	return c.Repository.DeleteSubscription(ctx, sub)
}
