package claims

import (
	"context"
	"fmt"
	"time"

	"github.com/svcdev/svc/pkg/clock"
)

// RecheckDue checks each verified claim not yet checked in the current period of every. The
// service runs it on every replica, every CLAIMS_RECHECK_SCAN.
//
// The check of one claim in one period is reserved by inserting a lease whose _id names both:
// the replica whose insert succeeds checks, the others skip. A replica that dies mid-check loses
// that period's check, which only delays a lapse by one period.
//
// Once a replica has seen the lease of every claim due in a period taken, by itself or by
// another, nothing more is due until the next period: a claim verified meanwhile was just looked
// at. The scans between cost no store command, so the scan interval costs nothing per claim.
func (s *Service) RecheckDue(ctx context.Context, every time.Duration) error {
	now := clock.Now()
	period := now.Truncate(every)
	s.recheckMu.Lock()
	done := s.rechecked.Equal(period)
	s.recheckMu.Unlock()
	if done {
		return nil
	}
	if err := s.Store.Leases().Sweep(ctx, now); err != nil {
		return err
	}
	states, err := s.Store.AllCurrentStates(ctx)
	if err != nil {
		return err
	}
	var ids []string
	for id, st := range states {
		// A claim verified during this period was just looked at.
		if st.Status == Verified && st.At.Before(period) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		s.recheckedAll(period)
		return nil
	}
	cs, err := s.Store.ClaimsByID(ctx, ids)
	if err != nil {
		return err
	}
	for i := range cs {
		if ctx.Err() != nil {
			return nil
		}
		c := &cs[i]
		key := fmt.Sprintf("%s/%d", c.ID, period.UnixMilli())
		won, err := s.Store.Leases().Take(ctx, key, period.Add(2*every))
		if err != nil {
			return err
		}
		if !won {
			continue
		}
		st := states[c.ID]
		ch, after, err := s.check(ctx, "", c, &st, true)
		if err != nil {
			s.Log.Warn("re-checking a claim failed", "claim_id", c.ID, "error", err)
			continue
		}
		s.Log.Info("claim re-checked", "claim_id", c.ID, "outcome", ch.Outcome, "status", after.Status)
	}
	if ctx.Err() == nil {
		s.recheckedAll(period)
	}
	return nil
}

// recheckedAll notes that every re-check due in period is taken.
func (s *Service) recheckedAll(period time.Time) {
	s.recheckMu.Lock()
	s.rechecked = period
	s.recheckMu.Unlock()
}
