package webhook

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"golang.org/x/sync/errgroup"

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
		// The scope's reach first, so that no reader ever misses a place taken within it.
		if err := s.Store.OpenPlaces(ctx, q.scope, q.limit); err != nil {
			s.releaseSlots(ctx, taken)
			return nil, err
		}
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
// after (0 when none is left). It costs one point read per place of the box's quota and one per
// subscription listed, whatever the store holds.
func (s *Subscriptions) ListContextSubscriptions(ctx context.Context, t *contract.Target, after, limit int) ([]store.Subscription, int, error) {
	held, err := holders(ctx, s.Store, boxScope(t.ObjectID), func(sl store.Slot) bool { return sl.Place() > after }, limit+1)
	if err != nil {
		return nil, 0, err
	}
	if len(held) <= limit {
		return subscriptionsOf(held), 0, nil
	}
	return subscriptionsOf(held[:limit]), held[limit-1].place, nil
}

// PlaceStore reads the places of a scope and the subscriptions holding them.
type PlaceStore interface {
	Places(ctx context.Context, scope string) ([]store.Slot, error)
	Subscription(ctx context.Context, id string) (*store.Subscription, error)
	ReleaseSlots(ctx context.Context, ids ...string) error
}

// holder is a subscription and the place it holds.
type holder struct {
	sub   store.Subscription
	place int
}

// holders reads the subscriptions holding the places of scope that keep accepts (nil: every
// place), in place order, at most max of them (0: all). Each subscription is listed once (a
// migration cut short may have given one two places). A place whose subscription is gone long
// enough (a stop between a create's or delete's two writes) is freed. It costs a point read per place of the scope and
// one per subscription read, whatever the store holds.
func holders(ctx context.Context, st PlaceStore, scope string, keep func(store.Slot) bool, max int) ([]holder, error) {
	places, err := st.Places(ctx, scope)
	if err != nil {
		return nil, err
	}
	return readPlaces(ctx, st, places, keep, max)
}

// readPlaces is holders over places already read, in their order.
func readPlaces(ctx context.Context, st PlaceStore, places []store.Slot, keep func(store.Slot) bool, max int) ([]holder, error) {
	var wanted []store.Slot
	seen := map[string]bool{}
	for _, sl := range places {
		if (keep == nil || keep(sl)) && !seen[sl.SubscriptionID] {
			seen[sl.SubscriptionID] = true
			wanted = append(wanted, sl)
		}
	}
	out := []holder{}
	for len(wanted) > 0 && (max == 0 || len(out) < max) {
		n := len(wanted)
		if max > 0 {
			n = min(n, max-len(out)) // most places hold their subscription: read about what is missing
		}
		subs, err := readHolders(ctx, st, wanted[:n])
		if err != nil {
			return nil, err
		}
		for i, sub := range subs {
			if sub != nil {
				out = append(out, holder{sub: *sub, place: wanted[i].Place()})
			}
		}
		wanted = wanted[n:]
	}
	return out, nil
}

// readHolders reads the subscriptions holding places, a few at once; nil for one that is gone.
func readHolders(ctx context.Context, st PlaceStore, places []store.Slot) ([]*store.Subscription, error) {
	found := make([]*store.Subscription, len(places))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(subscriptionReaders)
	for i, sl := range places {
		g.Go(func() error {
			sub, err := st.Subscription(gctx, sl.SubscriptionID)
			switch {
			case errors.Is(err, mongox.ErrNotFound):
				if clock.Now().Sub(sl.At) > strayAfter {
					return st.ReleaseSlots(gctx, sl.ID)
				}
				return nil
			case err != nil:
				return err
			}
			found[i] = sub
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return found, nil
}

// subscriptionReaders bounds the subscription point reads of one listing sent at once.
const subscriptionReaders = 8

func subscriptionsOf(hs []holder) []store.Subscription {
	out := make([]store.Subscription, len(hs))
	for i, h := range hs {
		out[i] = h.sub
	}
	return out
}
