package claims

import (
	"context"
	"fmt"

	"github.com/svcdev/svc/claims-svc/internal/store"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
)

// Seed is a claim for Preload: a domain claim of ObjectID, verified or pending.
type Seed struct {
	ObjectID, ObjectHash, Domain string
	Verified                     bool
}

// Preload stores claims as creates store them (on their objects' lists, within the quota) and,
// for a verified seed, the match, the state and the re-check schedule a verification records,
// without its event: it grows a store for benchmarks. Seeds of one object must come in order,
// from one caller.
func (s *Service) Preload(ctx context.Context, seeds []Seed) error {
	for _, sd := range seeds {
		t, err := parseTarget(Domain, sd.Domain)
		if err != nil {
			return fmt.Errorf("preload: %w", err)
		}
		c := s.newClaim(apikey.NewID("clm"), sd.ObjectID, sd.ObjectHash, Domain, sd.Domain, t)
		if err := s.takePlace(ctx, c.ObjectID, c.ID); err != nil {
			return fmt.Errorf("preload: %w", err)
		}
		if err := s.Store.InsertClaim(ctx, c); err != nil {
			return err
		}
		if !sd.Verified {
			continue
		}
		now := clock.Now()
		ch := &store.Check{ID: apikey.NewID("chk"), ClaimID: c.ID, At: now, Outcome: store.Match, Reason: "preloaded"}
		if err := s.Store.InsertCheck(ctx, ch); err != nil {
			return err
		}
		if err := s.Store.ScheduleRecheck(ctx, s.nextPeriod(now), c.ID); err != nil {
			return err
		}
		st := &store.State{ID: store.StateID(c.ID, 1), ClaimID: c.ID, ObjectID: c.ObjectID, Gen: 1, Status: Verified, At: now, VerifiedAt: now}
		if err := s.Store.InsertState(ctx, st); err != nil {
			return err
		}
	}
	return nil
}
