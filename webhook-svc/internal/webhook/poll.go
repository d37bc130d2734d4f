package webhook

import (
	"context"
	"sync"
	"time"

	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// pollPage is how many due entries one read of the schedule returns, and so how many deliveries
// share the commands of a page: the reads of their deliveries, claims, subscriptions and health,
// and the writes of their outcomes.
const pollPage = 100

// poll walks the due part of the schedule a page at a time until it has seen it all: each page is
// settled (page) before the next is read, so that a replica never races its own attempts, and the
// next page starts after the last entry of this one, so that an entry left for later (a claim
// another replica holds, a delivery still on its way) is not read again in the same walk. The
// entries of final deliveries are deleted after each page (flush). A backlog (the deliveries an
// outage left, due at once) is thus drained page after page, not a page per PollInterval.
func (s *Sender) poll(ctx context.Context) error {
	after := ""
	for ctx.Err() == nil {
		now := clock.Now()
		due, err := s.Store.DueEntries(ctx, after, now, pollPage)
		if err != nil || len(due) == 0 {
			return err
		}
		if err := s.page(ctx, due, now); err != nil {
			return err
		}
		s.flush(ctx)
		if len(due) < pollPage {
			return nil
		}
		after = due[len(due)-1].Key
	}
	return nil
}

// page settles a page of due entries against their deliveries, the truth of the schedule, read in
// one find. An entry whose delivery is final, or does not exist a lease after the entry came due
// (its writer stopped between inserting the entry and the delivery), is deleted; before that, a
// missing delivery may still be on its way (a replay's entry is due at once, and its delivery is
// inserted just after it). An entry due before its delivery's next attempt moves to it: the new
// entries are inserted in one command before the old ones go with the flush. The deliveries whose
// next attempt has come are claimed and attempted (claim, attemptAll).
func (s *Sender) page(ctx context.Context, due []store.DueEntry, now time.Time) error {
	found, err := s.Store.DeliveriesByID(ctx, idsOf(due, func(e store.DueEntry) string { return e.ID }))
	if err != nil {
		return err
	}
	var done, moved []store.DueEntry
	var claims []claim
	taken := map[string]bool{}
	for _, e := range due {
		d := found[e.ID]
		switch {
		case d == nil:
			if now.Sub(e.DueAt) >= s.Lease {
				done = append(done, e)
			}
		case d.Status != store.StatusPending || d.NextAttemptAt == nil:
			done = append(done, e)
		case d.NextAttemptAt.After(now):
			moved, done = append(moved, store.Due(d.ID, *d.NextAttemptAt)), append(done, e)
		case !taken[d.ID]:
			// A delivery with two entries due is attempted once; its other entry is early after
			// the attempt, and moved or deleted by a later poll.
			taken[d.ID] = true
			claims = append(claims, s.claimOf(d, now))
		}
	}
	if err := s.Store.InsertDue(ctx, moved...); err != nil {
		return err
	}
	s.finMu.Lock()
	s.finished = append(s.finished, done...)
	s.finMu.Unlock()
	as, err := s.claim(ctx, claims)
	if err != nil {
		return err
	}
	s.attemptAll(ctx, as)
	return nil
}

// claim is a due delivery's claim on its next attempt (store.ClaimKey).
type claim struct {
	id  string
	n   int       // the attempt's number
	end time.Time // when the claim's lease ends
	key string
}

// claimOf is the claim a replica polling at now takes on d's next attempt: its slot counts the
// leases since the attempt came due, so that every replica polling within one lease races for the
// same key, and the next lease's poll takes over an attempt whose holder died.
func (s *Sender) claimOf(d *store.Delivery, now time.Time) claim {
	n, slot := len(d.Attempts)+1, 1+int(now.Sub(*d.NextAttemptAt)/s.Lease)
	end := d.NextAttemptAt.Add(time.Duration(slot) * s.Lease)
	return claim{id: d.ID, n: n, end: end, key: store.ClaimKey(d.ID, n, slot, end)}
}

// claim takes the claims of a page's due deliveries in one insert and prepares the attempts of
// those this replica won: it reads their deliveries again (one find), so that an attempt the
// claim's previous holder made meanwhile is not repeated, then their subscriptions and health
// (one find each). A delivery whose subscription was deleted or disabled fails unsent.
func (s *Sender) claim(ctx context.Context, cs []claim) ([]attempt, error) {
	if len(cs) == 0 {
		return nil, nil
	}
	won, err := s.Store.Claim(ctx, idsOf(cs, func(c claim) string { return c.key })...)
	if err != nil {
		return nil, err
	}
	var ids []string
	held := map[string]claim{}
	for i, c := range cs {
		if won[i] {
			ids, held[c.id] = append(ids, c.id), c
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	cur, err := s.Store.DeliveriesByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	var ready []*store.Delivery
	var subIDs []string
	for _, id := range ids {
		d := cur[id]
		if d == nil || d.Status != store.StatusPending || len(d.Attempts)+1 != held[id].n {
			continue // the attempt was made meanwhile by the claim's previous holder
		}
		ready, subIDs = append(ready, d), append(subIDs, d.SubscriptionID)
	}
	if len(ready) == 0 {
		return nil, nil
	}
	subs, err := s.Store.SubscriptionsByID(ctx, subIDs)
	if err != nil {
		return nil, err
	}
	health, err := s.Store.Healths(ctx, subIDs)
	if err != nil {
		return nil, err
	}
	as := make([]attempt, len(ready))
	for i, d := range ready {
		sub, h := subs[d.SubscriptionID], health[d.SubscriptionID]
		as[i] = attempt{sub: sub, h: h, d: d, end: held[d.ID].end}
		switch {
		case sub == nil:
			as[i].unsent = reasonDeleted
		case store.Disabled(sub, h):
			as[i].unsent = reasonDisabled
		}
	}
	return as, nil
}

// attemptAll makes a page's attempts, Workers POSTs at once, and records their outcomes as they
// come: whatever outcomes are ready when the previous record ends are recorded together, so that
// the record of a fast attempt waits for no slow POST, and a page of fast ones costs a few writes.
// An attempt whose claim lapsed while it waited is not made (the next lease's holder makes it); one
// whose POST a stop cut short is not recorded (its outcome is unknown: the lease makes it again).
func (s *Sender) attemptAll(ctx context.Context, as []attempt) {
	if len(as) == 0 {
		return
	}
	made := make(chan attempt, len(as))
	go func() {
		defer close(made)
		sem := make(chan struct{}, max(1, s.Workers))
		var wg sync.WaitGroup
		defer wg.Wait()
		for _, a := range as {
			if a.unsent != "" {
				made <- a
				continue
			}
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				if !clock.Now().Before(a.end) {
					return
				}
				a.res = s.post(ctx, a.sub, a.d)
				if ctx.Err() == nil {
					made <- a
				}
			})
		}
	}()
	// The attempts were made: their outcomes are kept even when the replica is stopping.
	rctx := context.WithoutCancel(ctx)
	for a := range made {
		batch := append(make([]attempt, 0, len(as)), a)
	ready:
		for {
			select {
			case b, ok := <-made:
				if !ok {
					break ready
				}
				batch = append(batch, b)
			default:
				break ready
			}
		}
		if err := s.record(rctx, batch); err != nil {
			s.Log.Warn("recording delivery attempts failed; their leases make them again", "attempts", len(batch), "error", err)
		}
	}
}
