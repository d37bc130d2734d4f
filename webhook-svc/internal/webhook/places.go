package webhook

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// listsMigration names the marker of Upgrade in the migrations collection.
const listsMigration = "subscription_lists"

// Upgrade carries subscriptions stored by earlier releases over, once per database: each is put
// on its object's list (earlier releases found subscriptions through their quota places), and
// given a place in each quota it holds none of (releases before the places, and the quota of one
// watcher's subscriptions to one box, which came later). A scope that an earlier release let fill
// past its quota gets places past the quota, so that no subscription is lost; new creates still
// stop at the quota. It reads every subscription with a cursor (a batch in memory at a time),
// then leaves a marker; later calls do nothing. It returns how many subscriptions it listed.
//
// A run cut short and run again lists no subscription twice (the list is keyed by it); it may
// give one a second place in a scope, which is freed when the subscription is deleted.
func (s *Subscriptions) Upgrade(ctx context.Context) (int, error) {
	done, err := s.Store.MigrationDone(ctx, listsMigration)
	if err != nil || done {
		return 0, err
	}
	n := 0
	err = s.Store.EachSubscription(ctx, func(sub *store.Subscription) error {
		if err := s.Store.ListSubscription(ctx, sub); err != nil {
			return err
		}
		n++
		placed := false
		for _, q := range s.quotas(sub) {
			if slices.ContainsFunc(sub.Slots, func(id string) bool { return strings.HasPrefix(id, q.scope+"#") }) {
				continue
			}
			id, err := s.placeAnywhere(ctx, q, sub)
			if err != nil {
				return err
			}
			sub.Slots, placed = append(sub.Slots, id), true
		}
		if !placed {
			return nil
		}
		// Through the store the use cases share, so that cached lists of the object are retired.
		return s.Store.ReplaceSubscription(ctx, sub)
	})
	if err != nil {
		return n, fmt.Errorf("list subscriptions: %w", err)
	}
	return n, s.Store.MarkMigration(ctx, listsMigration, clock.Now())
}

// maxPlaces bounds how far a migrated scope may reach past its quota.
const maxPlaces = 1 << 12

// placeAnywhere takes the first free place of q's scope for sub, past the quota if it is full.
func (s *Subscriptions) placeAnywhere(ctx context.Context, q quota, sub *store.Subscription) (string, error) {
	id, err := s.Store.TakeSlot(ctx, q.scope, maxPlaces, 0, sub.ID, sub.CreatedAt)
	if err != nil {
		return "", err
	}
	if id == "" {
		return "", fmt.Errorf("scope %s holds %d subscriptions", q.scope, maxPlaces)
	}
	return id, nil
}
