package webhook

import (
	"context"
	"errors"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/svcdev/svc/pkg/mongox"
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

// SubscriptionCache is the repository with each object's subscriptions and their health
// remembered in this replica, so that fanning an event out costs a Redis read instead of store
// queries. An entry is labelled with the object's token (package versions), which every
// subscription or health write through the cache replaces, in every replica at once; an entry whose label is no longer the token is
// read again. The token is taken before the store is read, so an entry is never older than its
// label.
type SubscriptionCache struct {
	Repository
	tokens  *versions.Tokens
	entries *lru.Cache[string, cachedSubscriptions]
}

type cachedSubscriptions struct {
	token string
	subs  []Subscriber
}

// TokenTTL bounds how long an object's token lives; an expired one costs one store read.
const TokenTTL = 24 * time.Hour

// NewSubscriptionCache remembers the subscriptions of at most size objects.
func NewSubscriptionCache(repo Repository, tokens *versions.Tokens, size int) *SubscriptionCache {
	entries, err := lru.New[string, cachedSubscriptions](size)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return &SubscriptionCache{Repository: repo, tokens: tokens, entries: entries}
}

// SubscriptionsTo lists the subscriptions to an object's events. Callers must not modify them.
func (c *SubscriptionCache) SubscriptionsTo(ctx context.Context, objectID string) ([]Subscriber, error) {
	tok, err := c.tokens.Current(ctx, objectID)
	if err != nil {
		return c.read(ctx, objectID) // no Redis: no cache
	}
	if e, ok := c.entries.Get(objectID); ok && e.token == tok {
		return e.subs, nil
	}
	subs, err := c.read(ctx, objectID)
	if err != nil {
		return nil, err
	}
	c.entries.Add(objectID, cachedSubscriptions{token: tok, subs: subs})
	return subs, nil
}

func (c *SubscriptionCache) read(ctx context.Context, objectID string) ([]Subscriber, error) {
	subs, err := c.Repository.SubscriptionsOf(ctx, objectID, "", "", 0)
	if err != nil {
		return nil, err
	}
	out := make([]Subscriber, len(subs))
	for i, sub := range subs {
		h, err := c.Repository.Health(ctx, sub.ID)
		if err != nil {
			return nil, err
		}
		out[i] = Subscriber{Sub: sub, Health: *h}
	}
	return out, nil
}

// PutHealth writes a subscription's health and retires the cached list of its object.
func (c *SubscriptionCache) PutHealth(ctx context.Context, h *store.SubscriptionHealth) error {
	if h.ObjectID != "" {
		defer c.tokens.Changed(ctx, h.ObjectID)
	}
	return c.Repository.PutHealth(ctx, h)
}

// InsertSubscription stores a new subscription and retires the cached list of its object.
func (c *SubscriptionCache) InsertSubscription(ctx context.Context, sub *store.Subscription) error {
	defer c.tokens.Changed(ctx, sub.ObjectID)
	return c.Repository.InsertSubscription(ctx, sub)
}

// ReplaceSubscription rewrites a subscription and retires the cached list of its object.
func (c *SubscriptionCache) ReplaceSubscription(ctx context.Context, sub *store.Subscription) error {
	defer c.tokens.Changed(ctx, sub.ObjectID)
	return c.Repository.ReplaceSubscription(ctx, sub)
}

// DeleteSubscription deletes a subscription and retires the cached list of its object.
func (c *SubscriptionCache) DeleteSubscription(ctx context.Context, id string) error {
	sub, err := c.Repository.Subscription(ctx, id)
	switch {
	case errors.Is(err, mongox.ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	defer c.tokens.Changed(ctx, sub.ObjectID)
	return c.Repository.DeleteSubscription(ctx, id)
}
