package store

import (
	"context"
	"fmt"

	"github.com/svcdev/svc/pkg/mongox"
)

// listed is a subscription on its object's list. The entry holds the id only: a subscription is
// rewritten by its owner (secrets, headers), so a page reads the subscriptions themselves, in one
// find by their ids.
type listed struct {
	Key            string `bson:"_id"`
	SubscriptionID string `bson:"subscription_id"`
}

// listKey is <object>|<kind>|<subscription id>: an object's webhooks and the context
// subscriptions to it are each a range, and both together the range of the object, which the
// fan-out reads. Subscription ids are ULIDs, so a range is in the order of creation.
func listKey(sub *Subscription) string { return mongox.Key(sub.ObjectID, sub.Kind, sub.ID) }

// ListSubscription puts a stored subscription on its object's list; listing it again is a no-op.
func (s *Store) ListSubscription(ctx context.Context, sub *Subscription) error {
	if err := mongox.InsertOnce(ctx, s.c(Lists), listed{Key: listKey(sub), SubscriptionID: sub.ID}); err != nil {
		return fmt.Errorf("list subscription: %w", err)
	}
	return nil
}

// ListedSubscriptions reads up to limit subscriptions of one kind to objectID, oldest first,
// after the subscription after ("": from the first): one find of the list and one of the
// subscriptions it names.
func (s *Store) ListedSubscriptions(ctx context.Context, objectID, kind, after string, limit int) ([]Subscription, error) {
	r := mongox.Range{Scope: mongox.Scope(objectID, kind), Limit: limit}
	if after != "" {
		if !mongox.KeyPart(after) {
			return nil, fmt.Errorf("list subscriptions: %w", mongox.ErrBadKeyPart)
		}
		r.After = mongox.Key(objectID, kind, after)
	}
	return s.listedIn(ctx, r)
}

// SubscriptionsOf reads every subscription to objectID's events, of both kinds, oldest first of
// each: one find of the list, which the quotas bound (limit), and one of the subscriptions.
func (s *Store) SubscriptionsOf(ctx context.Context, objectID string, limit int) ([]Subscription, error) {
	return s.listedIn(ctx, mongox.Range{Scope: mongox.Scope(objectID), Limit: limit})
}

// listedIn reads the subscriptions listed in r, in its order; an entry whose subscription is gone
// (a stop between a delete's two writes) is skipped.
func (s *Store) listedIn(ctx context.Context, r mongox.Range) ([]Subscription, error) {
	entries, err := mongox.Find[listed](ctx, s.c(Lists), r)
	if err != nil {
		return nil, fmt.Errorf("read subscription list: %w", err)
	}
	if len(entries) == 0 {
		return []Subscription{}, nil
	}
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.SubscriptionID
	}
	subs, err := s.SubscriptionsByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]Subscription, 0, len(ids))
	for _, id := range ids {
		if sub, ok := subs[id]; ok {
			out = append(out, *sub)
		}
	}
	return out, nil
}

// SubscriptionsByID reads the subscriptions with the given ids that exist, in one find.
func (s *Store) SubscriptionsByID(ctx context.Context, ids []string) (map[string]*Subscription, error) {
	subs, err := mongox.FindIn[Subscription](ctx, s.c(Subscriptions), ids)
	if err != nil {
		return nil, fmt.Errorf("read subscriptions: %w", err)
	}
	out := make(map[string]*Subscription, len(subs))
	for i := range subs {
		out[subs[i].ID] = &subs[i]
	}
	return out, nil
}
