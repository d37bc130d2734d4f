package webhook

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// RecoverMax bounds the failed deliveries one recover sends again; the answer says when more
// are left, for a next call from where this one stopped.
const RecoverMax = 1000

// AttemptQuery selects a page of a webhook's delivery log.
type AttemptQuery struct {
	// Outcome keeps the attempts that ended a delivery so ("succeeded" or "failed"); "" keeps all.
	Outcome string
	// Since and Until keep the attempts logged in [Since, Until); zero means unbounded.
	Since, Until time.Time
	// Before is the key of the previous page's last attempt ("": the newest), Limit the page size.
	Before string
	Limit  int
}

// CheckOutcome validates an outcome filter.
func CheckOutcome(outcome string) error {
	switch outcome {
	case "", store.OutcomeSucceeded, store.OutcomeFailed:
		return nil
	}
	return apierr.BadRequest(apierr.CodeInvalidRequest, "outcome must be %s or %s", store.OutcomeSucceeded, store.OutcomeFailed)
}

// Attempts reads a page of a webhook's delivery log, newest first, and the key to page on from
// ("" when none is left): one range read of the log.
func (s *Subscriptions) Attempts(ctx context.Context, t *contract.Target, id string, q AttemptQuery) ([]store.LoggedAttempt, string, error) {
	if _, err := s.webhook(ctx, t, id); err != nil {
		return nil, "", err
	}
	page, err := s.Store.Attempts(ctx, store.AttemptRange{SubscriptionID: id, Outcome: q.Outcome, Since: q.Since, Until: q.Until, Before: q.Before}, q.Limit+1, false)
	if err != nil || len(page) <= q.Limit {
		return page, "", err
	}
	page = page[:q.Limit]
	return page, page[q.Limit-1].Key, nil
}

// AttemptCounts are a webhook's attempts over a window, by outcome.
type AttemptCounts struct {
	Since, Until time.Time
	// Attempts counts every attempt; Succeeded and Failed the deliveries that ended so.
	Attempts, Succeeded, Failed int64
}

// CountAttempts counts a webhook's attempts logged in [since, until): the window's range of each
// list, whose keys are read a thousand at a time.
func (s *Subscriptions) CountAttempts(ctx context.Context, t *contract.Target, id string, since, until time.Time) (*AttemptCounts, error) {
	if _, err := s.webhook(ctx, t, id); err != nil {
		return nil, err
	}
	out := &AttemptCounts{Since: since, Until: until}
	for outcome, n := range map[string]*int64{"": &out.Attempts, store.OutcomeSucceeded: &out.Succeeded, store.OutcomeFailed: &out.Failed} {
		var err error
		if *n, err = s.Store.CountAttempts(ctx, store.AttemptRange{SubscriptionID: id, Outcome: outcome, Since: since, Until: until}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Recovery is what a recover did.
type Recovery struct {
	// Recovered counts the deliveries sent again by this call; a call repeated with the same
	// since sends none of them again.
	Recovered int
	// More is true when failed deliveries past RecoverMax are left; Next is the time to pass as
	// since to recover them.
	More bool
	Next time.Time
}

// Recover sends again, once, every delivery of a webhook that failed for good since a time, as
// new deliveries signed with the secrets current when they are sent. Each new delivery's id
// is derived from the event, the webhook and since, so a repeated call (or an event that failed
// twice in the window) sends it once. It works through at most RecoverMax failures per call:
// one range read of the failures, oldest first, then a few commands per hundred of them.
func (s *Subscriptions) Recover(ctx context.Context, t *contract.Target, id string, since time.Time) (*Recovery, error) {
	if _, err := s.webhook(ctx, t, id); err != nil {
		return nil, err
	}
	failed, err := s.Store.Attempts(ctx, store.AttemptRange{SubscriptionID: id, Outcome: store.OutcomeFailed, Since: since}, RecoverMax+1, true)
	if err != nil {
		return nil, err
	}
	out := &Recovery{More: len(failed) > RecoverMax}
	failed = failed[:min(len(failed), RecoverMax)]
	seen := map[string]bool{}
	for entries := range slices.Chunk(failed, 100) {
		k, err := s.recoverChunk(ctx, id, since, entries, seen)
		if err != nil {
			return nil, err
		}
		out.Recovered += k
		out.Next = entries[len(entries)-1].At.Add(time.Millisecond) // past the last one recovered
	}
	return out, nil
}

// recoverChunk stores the new deliveries of a page of failures, due at once: one find of the
// deliveries failed, then two commands.
func (s *Subscriptions) recoverChunk(ctx context.Context, id string, since time.Time, entries []store.LoggedAttempt, seen map[string]bool) (int, error) {
	now := clock.Now()
	found, err := s.Store.DeliveriesByID(ctx, idsOf(entries, func(e store.LoggedAttempt) string { return e.DeliveryID }))
	if err != nil {
		return 0, err
	}
	var ds []*store.Delivery
	for _, e := range entries {
		rid := fmt.Sprintf("%s.%s.recover-%d", e.EventID, id, since.UnixMilli())
		if seen[rid] {
			continue
		}
		seen[rid] = true
		d := found[e.DeliveryID]
		if d == nil {
			continue // swept after the retention: its body is gone
		}
		ds = append(ds, &store.Delivery{ID: rid, SubscriptionID: id, EventID: d.EventID, Event: d.Event, Body: d.Body,
			CreatedAt: now, Status: store.StatusPending, NextAttemptAt: &now, Attempts: []store.Attempt{}, ReplayOf: d.ID})
	}
	if len(ds) == 0 {
		return 0, nil
	}
	inserted, err := s.Store.InsertScheduled(ctx, ds)
	if err != nil {
		return 0, err
	}
	k := 0
	for _, in := range inserted {
		if in {
			k++
		}
	}
	return k, nil
}

// recentDeliveries returns the latest deliveries attempted for a webhook, newest first: those
// of the newest attempts in its log (a page of the log and one find of its deliveries, whatever
// the store holds). A delivery not attempted yet shows once its first attempt is made.
func (s *Subscriptions) recentDeliveries(ctx context.Context, id string) ([]store.Delivery, error) {
	// A delivery may have several attempts among the newest: read a few per delivery shown.
	entries, err := s.Store.Attempts(ctx, store.AttemptRange{SubscriptionID: id}, 3*RecentDeliveries, false)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var ids []string
	for _, e := range entries {
		if !seen[e.DeliveryID] {
			seen[e.DeliveryID] = true
			ids = append(ids, e.DeliveryID)
		}
	}
	found, err := s.Store.DeliveriesByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := []store.Delivery{}
	for _, did := range ids {
		if d := found[did]; d != nil && len(out) < RecentDeliveries { // nil: swept
			out = append(out, *d)
		}
	}
	slices.SortStableFunc(out, func(a, b store.Delivery) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return out, nil
}
