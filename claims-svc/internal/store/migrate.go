package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// listsMigration names the marker of BackfillLists in the migrations collection.
const listsMigration = "claim_lists"

// migrationBatch is how many documents a migration's cursor holds at once.
const migrationBatch = 500

// BackfillLists builds the lists of the claims stored by a release without them, once per
// database: each claim is put on its object's list (oldest first, by id), its current state gets
// its head hint, a verified one is put on the re-check list of period (the current one), and
// each claim whose list of checks is still empty gets its newest keep checks, oldest first. Both
// passes read with a cursor in batches, so memory holds a batch, whatever the store holds. Then
// it leaves a marker, and later calls do nothing. A run cut short and run again lists no claim
// twice (claims are listed once by id). It returns how many claims it listed.
func (s *Store) BackfillLists(ctx context.Context, period time.Time, keep int) (int, error) {
	err := mongox.FindOne(ctx, s.c(Migrations), mongox.ByID(listsMigration), &migration{})
	switch {
	case err == nil:
		return 0, nil
	case !errors.Is(err, mongox.ErrNotFound):
		return 0, fmt.Errorf("read migration marker: %w", err)
	}
	n, err := s.backfillClaims(ctx, period)
	if err != nil {
		return n, err
	}
	if err := s.backfillChecks(ctx, keep); err != nil {
		return n, err
	}
	if err := mongox.InsertOnce(ctx, s.c(Migrations), migration{ID: listsMigration, DoneAt: time.Now()}); err != nil {
		return n, fmt.Errorf("write migration marker: %w", err)
	}
	return n, nil
}

func (s *Store) backfillClaims(ctx context.Context, period time.Time) (int, error) {
	cur, err := s.c(Claims).Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetBatchSize(migrationBatch))
	if err != nil {
		return 0, fmt.Errorf("list claims: %w", err)
	}
	defer cur.Close(ctx)
	n := 0
	for cur.Next(ctx) {
		var c Claim
		if err := cur.Decode(&c); err != nil {
			return n, fmt.Errorf("decode claim: %w", err)
		}
		if _, _, err := mongox.AppendOnce(ctx, s.log, claimsList(c.ObjectID), c.ID, c.ID); err != nil {
			return n, fmt.Errorf("list claim %s: %w", c.ID, err)
		}
		st, ok, err := s.CurrentState(ctx, c.ID)
		if err != nil {
			return n, err
		}
		if ok {
			s.advanceState(ctx, c.ID, st.Gen)
		}
		if ok && st.Status == "verified" {
			if err := s.ScheduleRecheck(ctx, period, c.ID); err != nil {
				return n, err
			}
		}
		n++
	}
	if err := cur.Err(); err != nil {
		return n, fmt.Errorf("list claims: %w", err)
	}
	return n, nil
}

// backfillChecks reads the checks grouped by claim, newest first, and gives each claim without
// a list of checks its newest keep (all that the views and the lapse rule read).
func (s *Store) backfillChecks(ctx context.Context, keep int) error {
	cur, err := s.c(Checks).Find(ctx, bson.D{}, options.Find().
		SetSort(bson.D{{Key: "claim_id", Value: 1}, {Key: "at", Value: -1}, {Key: "_id", Value: -1}}).SetBatchSize(migrationBatch))
	if err != nil {
		return fmt.Errorf("list checks: %w", err)
	}
	defer cur.Close(ctx)
	var group []Check
	flush := func() error {
		if len(group) == 0 {
			return nil
		}
		defer func() { group = group[:0] }()
		if n, err := s.log.Len(ctx, checksList(group[0].ClaimID)); err != nil || n > 0 {
			return err // checks recorded since the upgrade are newer than these
		}
		slices.Reverse(group)
		for i := range group {
			if err := s.InsertCheck(ctx, &group[i]); err != nil {
				return err
			}
		}
		return nil
	}
	for cur.Next(ctx) {
		if err := s.nextCheck(cur, &group, keep, flush); err != nil {
			return err
		}
	}
	if err := cur.Err(); err != nil {
		return fmt.Errorf("list checks: %w", err)
	}
	return flush()
}

// nextCheck adds the cursor's check to the group of its claim, flushing the previous claim's.
func (s *Store) nextCheck(cur *mongo.Cursor, group *[]Check, keep int, flush func() error) error {
	var ch Check
	if err := cur.Decode(&ch); err != nil {
		return fmt.Errorf("decode check: %w", err)
	}
	if len(*group) > 0 && (*group)[0].ClaimID != ch.ClaimID {
		if err := flush(); err != nil {
			return err
		}
	}
	if len(*group) < keep {
		*group = append(*group, ch)
	}
	return nil
}
