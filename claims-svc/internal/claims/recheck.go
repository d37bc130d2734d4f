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
func (s *Service) RecheckDue(ctx context.Context, every time.Duration) error {
	now := clock.Now()
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
		if st.Status == Verified && st.At.Before(now.Truncate(every)) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	cs, err := s.Store.ClaimsByID(ctx, ids)
	if err != nil {
		return err
	}
	period := now.Truncate(every)
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
	return nil
}
