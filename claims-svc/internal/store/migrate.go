package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// layoutMigration names the marker of Upgrade in the migrations collection.
const layoutMigration = "claim_ranges"

// Upgrade carries a store written by an earlier release over to the ranges, once per database:
// states numbered "<claim>/<gen>" (and their "<claim>/head" hints), checks keyed by their id
// alone and the lists of mongox.Log (checks, re-check schedules) are rewritten under their data
// keys; every claim is put on its object's list and given a place of its object's quota; a
// verified claim is scheduled for a re-check in period (the current one). Then the old documents
// and the old lists are dropped and a marker is left, and later calls do nothing. Every write is
// keyed by the data it carries, so a run cut short and run again writes nothing twice. Cursors
// read in batches, so memory holds a batch, whatever the store holds. It returns how many claims
// it listed.
func (s *Store) Upgrade(ctx context.Context, period time.Time, maxPlaces int) (int, error) {
	err := mongox.FindOne(ctx, s.c(Migrations), mongox.ByID(layoutMigration), &migration{})
	switch {
	case err == nil:
		return 0, nil
	case !errors.Is(err, mongox.ErrNotFound):
		return 0, fmt.Errorf("read migration marker: %w", err)
	}
	if err := s.upgradeStates(ctx); err != nil {
		return 0, err
	}
	if err := s.upgradeChecks(ctx); err != nil {
		return 0, err
	}
	if err := s.upgradeLogs(ctx); err != nil {
		return 0, err
	}
	n, err := s.upgradeClaims(ctx, period, maxPlaces)
	if err != nil {
		return n, err
	}
	if err := mongox.InsertOnce(ctx, s.c(Migrations), migration{ID: layoutMigration, DoneAt: time.Now()}); err != nil {
		return n, fmt.Errorf("write migration marker: %w", err)
	}
	return n, nil
}

// each decodes every document of coll that filter selects, in _id order (which the _id index
// serves), and hands it to fn.
func each[T any](ctx context.Context, coll *mongo.Collection, filter any, fn func(T) error) error {
	return mongox.Each(ctx, coll, filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}), fn)
}

// carry hands every document of coll that old selects to fn (each), then drops them all; what
// names them in the error of the drop.
func carry[T any](ctx context.Context, coll *mongo.Collection, old bson.D, what string, fn func(T) error) error {
	if err := each(ctx, coll, old, fn); err != nil {
		return err
	}
	if _, err := coll.DeleteMany(ctx, old); err != nil {
		return fmt.Errorf("drop old %s: %w", what, err)
	}
	return nil
}

// oldLayout selects the documents whose _id has a '/' (earlier releases numbered states so).
var oldLayout = bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: "/"}}}}

// upgradeStates rewrites "<claim>/<gen>" states as <claim>|<gen>, then drops the old ones and
// the head hints.
func (s *Store) upgradeStates(ctx context.Context) error {
	return carry(ctx, s.c(States), oldLayout, "states", func(st State) error {
		if strings.HasSuffix(st.ID, "/head") {
			return nil
		}
		st.ID = StateID(st.ClaimID, st.Gen)
		if err := mongox.InsertOnce(ctx, s.c(States), st); err != nil {
			return fmt.Errorf("carry state over: %w", err)
		}
		return nil
	})
}

// oldCheck is a check as earlier releases stored it, decoded as a Check: under its id (which
// lands in Key), with no check_id, and otherwise the fields of a Check.
func oldCheck(c Check) *Check {
	c.ID = c.Key
	return &c
}

// oldChecks selects the checks stored under their id alone (they have no check_id).
var oldChecks = bson.D{{Key: "check_id", Value: bson.D{{Key: "$exists", Value: false}}}}

// upgradeChecks rewrites the checks stored under their id alone under their data keys.
func (s *Store) upgradeChecks(ctx context.Context) error {
	return carry(ctx, s.c(Checks), oldChecks, "checks", func(c Check) error { return s.InsertCheck(ctx, oldCheck(c)) })
}

// logEntry is an entry of an earlier release's list: "<list>#<position>" holding v.
type logEntry struct {
	ID    string        `bson:"_id"`
	Value bson.RawValue `bson:"v"`
}

// upgradeLogs carries the checks and re-check schedules of the earlier release's lists over
// (its lists of claims are rebuilt from the claims), then drops them.
func (s *Store) upgradeLogs(ctx context.Context) error {
	err := each(ctx, s.c(Logs), bson.D{}, func(e logEntry) error {
		list, pos, ok := strings.Cut(e.ID, "#")
		if _, err := strconv.ParseInt(pos, 10, 64); !ok || err != nil {
			return nil // a head hint or a key marker
		}
		switch {
		case strings.HasPrefix(list, "checks:"):
			var c Check
			if err := e.Value.Unmarshal(&c); err != nil {
				return fmt.Errorf("decode listed check %s: %w", e.ID, err)
			}
			return s.InsertCheck(ctx, oldCheck(c))
		case strings.HasPrefix(list, "due:"):
			ms, err := strconv.ParseInt(strings.TrimPrefix(list, "due:"), 10, 64)
			claimID, ok := e.Value.StringValueOK()
			if err != nil || !ok {
				return nil // not a schedule entry
			}
			return s.ScheduleRecheck(ctx, time.UnixMilli(ms), claimID)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := s.c(Logs).Drop(ctx); err != nil {
		return fmt.Errorf("drop old lists: %w", err)
	}
	return nil
}

// upgradeClaims lists every claim on its object's list, gives it a place of its object's quota
// (in the order of creation) and schedules the verified ones for a re-check in period. Claims
// are read in _id order, which is their order of creation (claim ids are ULIDs), and so each
// object's in its order too; a claim that has a place already (a run cut short) takes none.
func (s *Store) upgradeClaims(ctx context.Context, period time.Time, maxPlaces int) (int, error) {
	n := 0
	err := each(ctx, s.c(Claims), bson.D{}, func(c Claim) error {
		// Bounded by the quota: at most maxPlaces places exist per object.
		taken, err := mongox.Find[place](ctx, s.c(Places), mongox.Range{Scope: mongox.Scope(c.ObjectID), Limit: maxPlaces})
		if err != nil {
			return fmt.Errorf("read claim places: %w", err)
		}
		placed := slices.ContainsFunc(taken, func(p place) bool { return p.ClaimID == c.ID })
		if err := s.listClaim(ctx, &c); err != nil {
			return err
		}
		if !placed {
			// An object past the quota (a smaller CLAIMS_MAX_PER_OBJECT) keeps its claims
			// and takes no new one.
			if _, err := s.TakePlace(ctx, c.ObjectID, c.ID, maxPlaces); err != nil {
				return err
			}
		}
		st, ok, err := s.CurrentState(ctx, c.ID)
		if err != nil {
			return err
		}
		if ok && st.Status == "verified" {
			if err := s.ScheduleRecheck(ctx, period, c.ID); err != nil {
				return err
			}
		}
		n++
		return nil
	})
	return n, err
}
