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
	"github.com/svcdev/svc/pkg/mongox"
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
	// Before is the position to page from (0: the newest), Limit the page size.
	Before int64
	Limit  int
}

// AttemptLogName is the list a query pages, which its cursors are bound to.
func AttemptLogName(id, outcome string) string { return store.AttemptList(id, outcome) }

// CheckOutcome validates an outcome filter.
func CheckOutcome(outcome string) error {
	switch outcome {
	case "", store.OutcomeSucceeded, store.OutcomeFailed:
		return nil
	}
	return apierr.BadRequest(apierr.CodeInvalidRequest, "outcome must be %s or %s", store.OutcomeSucceeded, store.OutcomeFailed)
}

// Attempts reads a page of a webhook's delivery log, newest first, and the position of the next
// page (0 when none is left). A page costs its size in point reads, plus a bisection of the log
// for each time bound.
func (s *Subscriptions) Attempts(ctx context.Context, t *contract.Target, id string, q AttemptQuery) ([]mongox.Entry[store.AttemptEntry], int64, error) {
	if _, err := s.webhook(ctx, t, id); err != nil {
		return nil, 0, err
	}
	list := store.AttemptList(id, q.Outcome)
	before := q.Before
	if !q.Until.IsZero() {
		hi, err := s.Store.AttemptsBefore(ctx, list, q.Until)
		if err != nil {
			return nil, 0, err
		}
		if before == 0 || before > hi+1 {
			before = hi + 1
		}
		if hi == 0 {
			return nil, 0, nil
		}
	}
	var lo int64
	if !q.Since.IsZero() {
		var err error
		if lo, err = s.Store.AttemptsBefore(ctx, list, q.Since); err != nil {
			return nil, 0, err
		}
		if before != 0 && before <= lo+1 {
			return nil, 0, nil
		}
	}
	entries, next, err := s.Store.Attempts(ctx, list, before, q.Limit)
	if err != nil {
		return nil, 0, err
	}
	for len(entries) > 0 && entries[len(entries)-1].Seq <= lo {
		entries = entries[:len(entries)-1]
	}
	if next <= lo+1 {
		next = 0
	}
	return entries, next, nil
}

// AttemptCounts are a webhook's attempts over a window, by outcome.
type AttemptCounts struct {
	Since, Until time.Time
	// Attempts counts every attempt; Succeeded and Failed the deliveries that ended so.
	Attempts, Succeeded, Failed int64
}

// CountAttempts counts a webhook's attempts logged in [since, until). The counts are positions in
// the logs, found by bisection: a few point reads whatever the logs hold.
func (s *Subscriptions) CountAttempts(ctx context.Context, t *contract.Target, id string, since, until time.Time) (*AttemptCounts, error) {
	if _, err := s.webhook(ctx, t, id); err != nil {
		return nil, err
	}
	out := &AttemptCounts{Since: since, Until: until}
	for outcome, n := range map[string]*int64{"": &out.Attempts, store.OutcomeSucceeded: &out.Succeeded, store.OutcomeFailed: &out.Failed} {
		list := store.AttemptList(id, outcome)
		lo, err := s.Store.AttemptsBefore(ctx, list, since)
		if err != nil {
			return nil, err
		}
		hi, err := s.Store.AttemptsBefore(ctx, list, until)
		if err != nil {
			return nil, err
		}
		*n = max(0, hi-lo)
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
// twice in the window) sends it once. It works through at most RecoverMax failures per call.
func (s *Subscriptions) Recover(ctx context.Context, t *contract.Target, id string, since time.Time) (*Recovery, error) {
	if _, err := s.webhook(ctx, t, id); err != nil {
		return nil, err
	}
	list := store.AttemptList(id, store.OutcomeFailed)
	lo, err := s.Store.AttemptsBefore(ctx, list, since)
	if err != nil {
		return nil, err
	}
	n, err := s.Store.AttemptsLen(ctx, list)
	if err != nil {
		return nil, err
	}
	end := min(n, lo+RecoverMax)
	out := &Recovery{}
	seen := map[string]bool{}
	const chunk = 100
	for start := lo + 1; start <= end; start += chunk {
		last := min(end, start+chunk-1)
		entries, _, err := s.Store.Attempts(ctx, list, last+1, int(last-start+1))
		if err != nil {
			return nil, err
		}
		k, err := s.recoverChunk(ctx, id, since, entries, seen)
		if err != nil {
			return nil, err
		}
		out.Recovered += k
		if len(entries) > 0 {
			out.Next = entries[0].At.Add(time.Millisecond) // past the last one recovered
		}
	}
	out.More = n > end
	return out, nil
}

// recoverChunk stores the new deliveries of a page of failures, due at once: one find of the
// deliveries failed, then two commands.
func (s *Subscriptions) recoverChunk(ctx context.Context, id string, since time.Time, entries []mongox.Entry[store.AttemptEntry], seen map[string]bool) (int, error) {
	now := clock.Now()
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.Value.DeliveryID
	}
	found, err := s.Store.DeliveriesByID(ctx, ids)
	if err != nil {
		return 0, err
	}
	var due []store.DueEntry
	var ds []*store.Delivery
	for _, e := range entries {
		rid := fmt.Sprintf("%s.%s.recover-%d", e.Value.EventID, id, since.UnixMilli())
		if seen[rid] {
			continue
		}
		seen[rid] = true
		d := found[e.Value.DeliveryID]
		if d == nil {
			continue // swept after the retention: its body is gone
		}
		due = append(due, store.DueEntry{ID: rid, DueAt: now})
		ds = append(ds, &store.Delivery{ID: rid, SubscriptionID: id, EventID: d.EventID, Event: d.Event, Body: d.Body,
			CreatedAt: now, Status: store.StatusPending, NextAttemptAt: &now, Attempts: []store.Attempt{}, ReplayOf: d.ID})
	}
	if len(ds) == 0 {
		return 0, nil
	}
	// The entries first, so that no delivery is pending without one (see Fanout.Handle).
	if err := s.Store.InsertDue(ctx, due...); err != nil {
		return 0, err
	}
	inserted, err := s.Store.InsertDeliveries(ctx, ds)
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
	entries, _, err := s.Store.Attempts(ctx, store.AttemptList(id, ""), 0, 3*RecentDeliveries)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var ids []string
	for _, e := range entries {
		if !seen[e.Value.DeliveryID] {
			seen[e.Value.DeliveryID] = true
			ids = append(ids, e.Value.DeliveryID)
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
