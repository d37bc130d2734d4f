package webhook

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// CodeQuotaExceeded answers a create that would pass a quota (409).
const CodeQuotaExceeded = "QUOTA_EXCEEDED"

// Quotas bound what one caller can create. Each is a scope of slots (store.Slot), so that
// concurrent creates never pass it. An owner's webhooks and the context subscriptions others
// hold on its box are counted apart: strangers never use up the owner's places. Slots only
// count: subscriptions are found through their lists (store.ListedSubscriptions).
type Quotas struct {
	// WebhooksPerObject bounds an owner's webhooks on its own object.
	WebhooksPerObject int
	// ContextPerBox bounds the context subscriptions to one box, whoever holds them.
	ContextPerBox int
	// ContextPerWatcher bounds the context subscriptions one object holds, over every box.
	ContextPerWatcher int
	// ContextPerWatcherPerBox bounds the context subscriptions one object holds to one box, so
	// that no watcher can take all of a box's places.
	ContextPerWatcherPerBox int
}

// DefaultQuotas are the quotas of a Subscriptions built without them.
var DefaultQuotas = Quotas{WebhooksPerObject: 25, ContextPerBox: 100, ContextPerWatcher: 100, ContextPerWatcherPerBox: 10}

// quota is one scope a new subscription takes a place in.
type quota struct {
	scope   string
	limit   int
	message string
}

func (s *Subscriptions) quotas(sub *store.Subscription) []quota {
	q := s.Quotas
	if sub.Kind == store.KindWebhook {
		return []quota{{"webhooks:" + sub.ObjectID, bound(q.WebhooksPerObject, DefaultQuotas.WebhooksPerObject),
			"an object has at most %d webhooks"}}
	}
	return []quota{
		{"watcher:" + sub.CreatorID + ":box:" + sub.ObjectID, bound(q.ContextPerWatcherPerBox, DefaultQuotas.ContextPerWatcherPerBox),
			"an object may hold at most %d context subscriptions to one box"},
		{"box:" + sub.ObjectID, bound(q.ContextPerBox, DefaultQuotas.ContextPerBox),
			"a box has at most %d context subscriptions (its owner can list and remove them)"},
		{"watcher:" + sub.CreatorID, bound(q.ContextPerWatcher, DefaultQuotas.ContextPerWatcher),
			"an object may hold at most %d context subscriptions"},
	}
}

// takeSlots takes a place in each of a new subscription's quotas, or none: a full one frees
// those already taken and answers 409 QUOTA_EXCEEDED. Each search starts at a random place, so
// that creates racing for one scope mostly insert different places.
func (s *Subscriptions) takeSlots(ctx context.Context, sub *store.Subscription) ([]string, error) {
	var taken []string
	for _, q := range s.quotas(sub) {
		id, err := s.takeSlot(ctx, q, sub)
		if err == nil && id == "" {
			err = apierr.Conflict(CodeQuotaExceeded, fmt.Sprintf(q.message, q.limit))
		}
		if err != nil {
			s.releaseSlots(ctx, taken)
			return nil, err
		}
		taken = append(taken, id)
	}
	return taken, nil
}

// takeSlot takes a free place of q for sub, "" when every place is held. A full scope is looked
// at once more after freeing its stray places (see freeStrays).
func (s *Subscriptions) takeSlot(ctx context.Context, q quota, sub *store.Subscription) (string, error) {
	id, err := s.Store.TakeSlot(ctx, q.scope, q.limit, rand.IntN(q.limit), sub.ID, sub.CreatedAt)
	if err != nil || id != "" {
		return id, err
	}
	freed, err := s.freeStrays(ctx, q)
	if err != nil || freed == 0 {
		return "", err
	}
	return s.Store.TakeSlot(ctx, q.scope, q.limit, rand.IntN(q.limit), sub.ID, sub.CreatedAt)
}

// releaseSlots frees places after a create that did not complete; one left taken by a failure
// here is freed by the next create that finds the scope full.
func (s *Subscriptions) releaseSlots(ctx context.Context, ids []string) {
	_ = s.Store.ReleaseSlots(context.WithoutCancel(ctx), ids...)
}

// strayAfter is how old a place without its subscription must be before it is freed: a create
// inserts the place just before the subscription.
const strayAfter = time.Minute

// freeStrays frees the places of a full scope whose subscription is gone long enough (a stop
// between a create's or delete's two writes), and reports how many: one find of the places and
// one of their subscriptions.
func (s *Subscriptions) freeStrays(ctx context.Context, q quota) (int, error) {
	places, err := s.Store.SlotsOf(ctx, q.scope, q.limit)
	if err != nil || len(places) == 0 {
		return 0, err
	}
	subs, err := s.Store.SubscriptionsByID(ctx, idsOf(places, func(sl store.Slot) string { return sl.SubscriptionID }))
	if err != nil {
		return 0, err
	}
	var stray []string
	for _, sl := range places {
		if subs[sl.SubscriptionID] == nil && clock.Now().Sub(sl.At) > strayAfter {
			stray = append(stray, sl.ID)
		}
	}
	return len(stray), s.Store.ReleaseSlots(ctx, stray...)
}

// ListContextSubscriptions lists the context subscriptions to the owner's box, whoever holds
// them, oldest first: up to limit after the subscription after. A page is one find of the box's
// list and one of the subscriptions on it.
func (s *Subscriptions) ListContextSubscriptions(ctx context.Context, t *contract.Target, after string, limit int) ([]store.Subscription, error) {
	return s.Store.ListedSubscriptions(ctx, t.ObjectID, store.KindContext, after, limit)
}
