package webhook

import (
	"context"
	"fmt"
	"slices"

	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// placesMigration names the marker of AssignPlaces in the migrations collection.
const placesMigration = "subscription_places"

// AssignPlaces gives the subscriptions stored by a release without quota places a place in each
// of their quotas, so that the listings and the fan-out, which find subscriptions only through
// their places, keep finding them. Once per database: it reads every subscription with a cursor
// (a batch in memory at a time), then leaves a marker; later calls do nothing. A scope that an
// older release let fill past its quota (creates used to count, then insert) gets places past
// the quota and reaches that far, so that none of its subscriptions is lost; new creates still
// stop at the quota. It returns how many subscriptions it placed.
//
// A run cut short and run again may give a subscription a second place: listings show each
// subscription once, and the extra place is freed after its subscription is deleted.
func (s *Subscriptions) AssignPlaces(ctx context.Context) (int, error) {
	done, err := s.Store.MigrationDone(ctx, placesMigration)
	if err != nil || done {
		return 0, err
	}
	n := 0
	err = s.Store.EachSubscription(ctx, func(sub *store.Subscription) error {
		if len(sub.Slots) > 0 {
			return nil
		}
		for _, q := range s.quotas(sub) {
			id, err := s.placeAnywhere(ctx, q, sub)
			if err != nil {
				return err
			}
			sub.Slots = append(sub.Slots, id)
		}
		n++
		// Through the store the use cases share, so that cached lists of the object are retired.
		return s.Store.ReplaceSubscription(ctx, sub)
	})
	if err != nil {
		return n, fmt.Errorf("assign quota places: %w", err)
	}
	return n, s.Store.MarkMigration(ctx, placesMigration, clock.Now())
}

// maxPlaces bounds how far a migrated scope may reach past its quota.
const maxPlaces = 1 << 16

// placeAnywhere takes the first free place of q's scope for sub, past the quota if it is full,
// and makes the scope reach it.
func (s *Subscriptions) placeAnywhere(ctx context.Context, q quota, sub *store.Subscription) (string, error) {
	if err := s.Store.OpenPlaces(ctx, q.scope, q.limit); err != nil {
		return "", err
	}
	id, err := s.Store.TakeSlot(ctx, q.scope, maxPlaces, 0, sub.ID, sub.CreatedAt)
	if err != nil {
		return "", err
	}
	if id == "" {
		return "", fmt.Errorf("scope %s holds %d subscriptions", q.scope, maxPlaces)
	}
	return id, s.Store.OpenPlaces(ctx, q.scope, store.Slot{ID: id}.Place())
}

// Seed is a subscription for Preload: an owner's webhook on ObjectID (CreatorID is ObjectID)
// or a context subscription of CreatorID to the box ObjectID.
type Seed struct {
	Kind, ObjectID, CreatorID, CreatorHash, CallbackURL string
}

// Preload stores subscriptions as creates would (ids, secrets, every event allowed, a place in
// each quota), in a few bulk commands: it grows a store for benchmarks. Every scope the seeds
// fill must be new and filled by one call, within its quota.
func (s *Subscriptions) Preload(ctx context.Context, seeds []Seed) error {
	var subs []*store.Subscription
	var places []store.Slot
	reach := map[string]int{}
	taken := map[string]int{}
	for _, sd := range seeds {
		allowed := Events
		if sd.Kind == store.KindContext {
			allowed = ContextEvents
		}
		sub, _ := newSubscription(sd.Kind, sd.ObjectID, sd.CreatorID, sd.CreatorHash, sd.CallbackURL, slices.Clone(allowed))
		for _, q := range s.quotas(sub) {
			taken[q.scope]++
			if taken[q.scope] > q.limit {
				return fmt.Errorf("preload: scope %s past its quota of %d", q.scope, q.limit)
			}
			reach[q.scope] = q.limit
			sl := store.Slot{ID: store.SlotID(q.scope, taken[q.scope]), SubscriptionID: sub.ID, At: sub.CreatedAt}
			places = append(places, sl)
			sub.Slots = append(sub.Slots, sl.ID)
		}
		subs = append(subs, sub)
	}
	return s.Store.InsertPlaced(ctx, subs, places, reach)
}
