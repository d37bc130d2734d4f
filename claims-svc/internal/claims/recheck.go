package claims

import (
	"context"
	"fmt"
	"time"

	"github.com/svcdev/svc/pkg/clock"
)

// interval is how often each verified claim is looked at again.
func (s *Service) interval() time.Duration {
	if s.RecheckInterval > 0 {
		return s.RecheckInterval
	}
	return 24 * time.Hour
}

// nextPeriod is the re-check period after the one holding t.
func (s *Service) nextPeriod(t time.Time) time.Time {
	return t.Truncate(s.interval()).Add(s.interval())
}

// dueBatch is how many due re-checks RecheckDue reads at once.
const dueBatch = 100

// RecheckDue checks each verified claim due in the current period. The service runs it on every
// replica, every CLAIMS_RECHECK_SCAN.
//
// What is due is a list per period (store.ScheduleRecheck): a claim is put on the next period's
// list when it is verified and each time it comes due while still verified, so a scan costs the
// re-checks due, never the claims stored. A claim that lapsed meanwhile is skipped and leaves
// the schedule. Lists of periods no replica walked (the service was down) are walked too, so no
// verified claim falls off the schedule.
//
// The check of one claim in one period is reserved by inserting a lease whose _id names both:
// the replica whose insert succeeds checks, the others skip. A replica that dies mid-check loses
// that period's check, which only delays a lapse by one period.
//
// Once a replica has walked the period's list, nothing more is due until the next period (a
// claim verified meanwhile is due in the next one), so the scans between cost no store command.
func (s *Service) RecheckDue(ctx context.Context) error {
	now := clock.Now()
	every := s.interval()
	period := now.Truncate(every)
	if s.rechecked.Load() == period.UnixNano() {
		return nil
	}
	if err := s.Store.Leases().Sweep(ctx, now); err != nil {
		return err
	}
	last, err := s.Store.RecheckedThrough(ctx)
	if err != nil {
		return err
	}
	from := period.Add(-every) // no walk recorded yet: the previous period's list may hold claims not yet looked at
	if !last.IsZero() {
		from = last.Add(every)
		if from.After(period) {
			from = period
		}
		if earliest := period.Add(-maxMissedPeriods * every); from.Before(earliest) {
			from = earliest
		}
	}
	for p := from; !p.After(period); p = p.Add(every) {
		if err := s.walkDue(ctx, p, period, every); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
	}
	if err := s.Store.MarkRechecked(ctx, period); err != nil {
		return err
	}
	s.rechecked.Store(period.UnixNano())
	return nil
}

// maxMissedPeriods bounds how many periods back a scan looks for lists no replica walked.
const maxMissedPeriods = 400

// walkDue re-checks the claims on the list of period list, in the current period.
func (s *Service) walkDue(ctx context.Context, list, period time.Time, every time.Duration) error {
	for after := ""; ; {
		ids, next, err := s.Store.DueRechecks(ctx, list, after, dueBatch)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if ctx.Err() != nil {
				return nil
			}
			if err := s.recheck(ctx, id, period, every); err != nil {
				s.Log.Warn("re-checking a claim failed", "claim_id", id, "error", err)
			}
		}
		if next == "" {
			return nil
		}
		after = next
	}
}

// recheck looks at one due claim again, if it is still verified and was verified before the
// period; it stays on the schedule for the next period first, so that a replica stopping
// mid-check does not drop it.
func (s *Service) recheck(ctx context.Context, claimID string, period time.Time, every time.Duration) error {
	st, ok, err := s.Store.CurrentState(ctx, claimID)
	if err != nil || !ok || st.Status != Verified {
		return err // pending or lapsed: off the schedule until verified again
	}
	if err := s.Store.ScheduleRecheck(ctx, period.Add(every), claimID); err != nil {
		return err
	}
	if !st.At.Before(period) {
		return nil // verified during this period: just looked at
	}
	won, err := s.Store.Leases().Take(ctx, fmt.Sprintf("%s/%d", claimID, period.UnixMilli()), period.Add(2*every))
	if err != nil || !won {
		return err
	}
	c, err := s.Store.Claim(ctx, claimID)
	if err != nil {
		return err
	}
	ch, after, err := s.check(ctx, "", c, &st, true)
	if err != nil {
		return err
	}
	s.Log.Info("claim re-checked", "claim_id", c.ID, "outcome", ch.Outcome, "status", after.Status)
	return nil
}
