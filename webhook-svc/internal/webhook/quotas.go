package webhook

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// CodeQuotaExceeded answers a create that would pass a quota (409).
const CodeQuotaExceeded = "QUOTA_EXCEEDED"

// Quotas bound what one caller can create. Each is a scope of slots (store.Slot), so that
// concurrent creates never pass it. An owner's webhooks and the context subscriptions others
// hold on its box are counted apart: strangers never use up the owner's places.
type Quotas struct {
	// WebhooksPerObject bounds an owner's webhooks on its own object.
	WebhooksPerObject int
	// ContextPerBox bounds the context subscriptions to one box, whoever holds them.
	ContextPerBox int
	// ContextPerWatcher bounds the context subscriptions one object holds, over every box.
	ContextPerWatcher int
}

// DefaultQuotas are the quotas of a Subscriptions built without them.
var DefaultQuotas = Quotas{WebhooksPerObject: 25, ContextPerBox: 100, ContextPerWatcher: 100}

// quota is one scope a new subscription takes a place in.
type quota struct {
	scope   string
	limit   int
	message string
}

func (s *Subscriptions) quotas(sub *store.Subscription) []quota {
	q := s.Quotas
	if sub.Kind == store.KindWebhook {
		return []quota{{webhookScope(sub.ObjectID), bound(q.WebhooksPerObject, DefaultQuotas.WebhooksPerObject),
			"an object has at most %d webhooks"}}
	}
	return []quota{
		{boxScope(sub.ObjectID), bound(q.ContextPerBox, DefaultQuotas.ContextPerBox),
			"a box has at most %d context subscriptions (its owner can list and remove them)"},
		{"watcher:" + sub.CreatorID, bound(q.ContextPerWatcher, DefaultQuotas.ContextPerWatcher),
			"an object may hold at most %d context subscriptions"},
	}
}

func webhookScope(objectID string) string { return "webhooks:" + objectID }
func boxScope(objectID string) string     { return "box:" + objectID }

// takeSlots takes a place in each of a new subscription's quotas, or none: a full one frees
// those already taken and answers 409 QUOTA_EXCEEDED. Each search starts at a random place, so
// that creates racing for one scope mostly insert different places.
func (s *Subscriptions) takeSlots(ctx context.Context, sub *store.Subscription) ([]string, error) {
	var taken []string
	for _, q := range s.quotas(sub) {
		id, err := s.Store.TakeSlot(ctx, q.scope, q.limit, rand.IntN(q.limit), sub.ID, sub.CreatedAt)
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

// releaseSlots frees places after a create that did not complete; one left taken by a failure
// here is freed by the owner's next listing of the scope.
func (s *Subscriptions) releaseSlots(ctx context.Context, ids []string) {
	_ = s.Store.ReleaseSlots(context.WithoutCancel(ctx), ids...)
}

// strayAfter is how old a place without its subscription must be before a listing frees it: a
// create inserts the place just before the subscription.
const strayAfter = time.Minute

// ListContextSubscriptions lists the context subscriptions to the owner's box, whoever holds
// them, in the order of their places: up to limit from place after+1, and the place to continue
// after (0 when none is left). It costs at most one point read per place of the box's quota.
func (s *Subscriptions) ListContextSubscriptions(ctx context.Context, t *contract.Target, after, limit int) ([]store.Subscription, int, error) {
	scope := boxScope(t.ObjectID)
	total := bound(s.Quotas.ContextPerBox, DefaultQuotas.ContextPerBox)
	out := []store.Subscription{}
	for n := after + 1; n <= total; n++ {
		if len(out) == limit {
			return out, n - 1, nil
		}
		sub, err := s.atSlot(ctx, scope, n)
		if err != nil {
			return nil, 0, err
		}
		if sub != nil {
			out = append(out, *sub)
		}
	}
	return out, 0, nil
}

// atSlot reads the subscription holding the n-th place of scope, or nil. A place whose
// subscription is gone long enough (a stop between a create's or delete's two writes) is freed.
func (s *Subscriptions) atSlot(ctx context.Context, scope string, n int) (*store.Subscription, error) {
	sl, err := s.Store.SlotAt(ctx, scope, n)
	if err != nil || sl == nil {
		return nil, err
	}
	sub, err := s.Store.Subscription(ctx, sl.SubscriptionID)
	switch {
	case errors.Is(err, mongox.ErrNotFound):
		if clock.Now().Sub(sl.At) > strayAfter {
			return nil, s.Store.ReleaseSlots(ctx, sl.ID)
		}
		return nil, nil
	case err != nil:
		return nil, err
	}
	return sub, nil
}
