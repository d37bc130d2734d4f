package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"golang.org/x/sync/errgroup"

	"github.com/svcdev/svc/pkg/mongox"
)

// The lists below (mongox.Log) are how every request and the re-check loop find documents:
// point reads on _id, whatever the collections hold. FerretDB pushes down nothing but _id
// equality, so a filter on object_id or claim_id would read every claim, state or check stored.

func claimsList(objectID string) string { return "claims:" + objectID }
func checksList(claimID string) string  { return "checks:" + claimID }
func dueList(period time.Time) string   { return "due:" + strconv.FormatInt(period.UnixMilli(), 10) }
func stateHeadID(claimID string) string { return claimID + "/head" }

// readers bounds the point reads one request sends at once.
const readers = 16

// ListClaim appends a claim to its object's list and returns its place (from 1): the place is
// what the per-object quota counts, so concurrent creates never pass it.
func (s *Store) ListClaim(ctx context.Context, objectID, claimID string) (int64, error) {
	seq, err := mongox.Append(ctx, s.log, claimsList(objectID), claimID)
	if err != nil {
		return 0, fmt.Errorf("list claim: %w", err)
	}
	return seq, nil
}

// ClaimPlaces is how many places of an object's claim list were ever taken.
func (s *Store) ClaimPlaces(ctx context.Context, objectID string) (int64, error) {
	return s.log.Len(ctx, claimsList(objectID))
}

// ClaimsPage reads up to limit of an object's claims, oldest first, from the place after after,
// and the place to continue after (0 when none is left). A place whose claim was never stored (a
// create refused by the quota, or stopped between its writes) is skipped. It costs two point
// reads per place read.
func (s *Store) ClaimsPage(ctx context.Context, objectID string, after int64, limit int) ([]Claim, int64, error) {
	list := claimsList(objectID)
	n, err := s.log.Len(ctx, list)
	if err != nil {
		return nil, 0, err
	}
	out := []Claim{}
	pos := after
	for pos < n && len(out) < limit {
		batch := min(n-pos, int64(limit-len(out)))
		found := make([]*Claim, batch)
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(readers)
		for i := range batch {
			g.Go(func() error {
				e, err := mongox.Get[string](gctx, s.log, list, pos+1+i)
				if errors.Is(err, mongox.ErrNotFound) {
					return nil
				}
				if err != nil {
					return err
				}
				c, err := s.Claim(gctx, e.Value)
				if errors.Is(err, mongox.ErrNotFound) {
					return nil
				}
				found[i] = c
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return nil, 0, fmt.Errorf("read claims of %s: %w", objectID, err)
		}
		for _, c := range found {
			if c != nil {
				out = append(out, *c)
			}
		}
		pos += batch
	}
	if pos >= n {
		pos = 0
	}
	return out, pos, nil
}

// ScheduleRecheck puts a claim on the list of the claims due for a re-check in period, once.
func (s *Store) ScheduleRecheck(ctx context.Context, period time.Time, claimID string) error {
	if _, _, err := mongox.AppendOnce(ctx, s.log, dueList(period), claimID, claimID); err != nil {
		return fmt.Errorf("schedule re-check: %w", err)
	}
	return nil
}

// DueRechecks reads up to limit ids of the claims due for a re-check in period, newest first,
// below place before (0: the newest), and the place of the next page (0 when none is left).
func (s *Store) DueRechecks(ctx context.Context, period time.Time, before int64, limit int) ([]string, int64, error) {
	entries, next, err := mongox.Page[string](ctx, s.log, dueList(period), before, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("read due re-checks: %w", err)
	}
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.Value
	}
	return ids, next, nil
}

// migration is the marker of a one-off data change, or of the re-check loop's progress.
type migration struct {
	ID     string    `bson:"_id"`
	DoneAt time.Time `bson:"done_at"`
}

// rechecked names the record of the last period whose due list the re-check loop walked through.
const rechecked = "recheck_walked"

// RecheckedThrough is the last period whose due re-checks were all taken (zero: none yet).
func (s *Store) RecheckedThrough(ctx context.Context) (time.Time, error) {
	var m migration
	err := mongox.FindOne(ctx, s.c(Migrations), mongox.ByID(rechecked), &m)
	if errors.Is(err, mongox.ErrNotFound) {
		return time.Time{}, nil
	}
	return m.DoneAt, err
}

// MarkRechecked records that every re-check due through period is taken. The record only moves
// forward; replicas writing at once write the same period.
func (s *Store) MarkRechecked(ctx context.Context, period time.Time) error {
	err := mongox.Upsert(ctx, s.c(Migrations), rechecked, bson.D{{Key: "$max", Value: bson.D{{Key: "done_at", Value: period}}}})
	if err != nil {
		return fmt.Errorf("record re-check progress: %w", err)
	}
	return nil
}
