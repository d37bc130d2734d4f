package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// rangesMigration names the marker of Upgrade in the migrations collection.
const rangesMigration = "object_ranges"

// Carried counts what Upgrade carried over.
type Carried struct {
	Sources, Links, Decisions int
}

// Upgrade carries the sources, links and decisions that earlier releases stored over to the
// objects' ranges (lists.go), once per database: it walks the sources, links and decisions
// collections, and the decisions that the release of mongox.Log lists kept only in those lists,
// with cursors in batches, and puts each into its object's range under its data key, so that a
// run cut short and run again, or two replicas starting together, write nothing twice. Each
// source also gets its slot number written, so that deleting it frees that slot: first from the
// slots an earlier release claimed, then, for a source stored before slots, by claiming a free
// one (none left: it keeps no slot, as the object already holds more sources than the limit).
// Then it drops the old lists and leaves a marker, and later calls do nothing.
func (s *Store) Upgrade(ctx context.Context, slots int) (Carried, error) {
	var n Carried
	done, err := s.migrated(ctx, rangesMigration)
	if err != nil || done {
		return n, err
	}
	if err := s.upgradeSlots(ctx); err != nil {
		return n, err
	}
	if n.Sources, err = s.upgradeSources(ctx, slots); err != nil {
		return n, err
	}
	if n.Links, err = eachDoc(ctx, s.links, bson.D{}, func(l Link) error { return s.listLink(ctx, &l) }); err != nil {
		return n, fmt.Errorf("carry links over: %w", err)
	}
	if n.Decisions, err = eachDoc(ctx, s.decisions, bson.D{}, func(d Decision) error { return s.RecordDecision(ctx, &d) }); err != nil {
		return n, fmt.Errorf("carry decisions over: %w", err)
	}
	listed, err := s.upgradeListedDecisions(ctx)
	if err != nil {
		return n, err
	}
	n.Decisions += listed
	if err := s.lists.Drop(ctx); err != nil {
		return n, fmt.Errorf("drop old lists: %w", err)
	}
	return n, s.markMigrated(ctx, rangesMigration)
}

// upgradeSlots writes into each source an earlier release stored without its slot number the
// slot it claimed (slot ids are object_id:n).
func (s *Store) upgradeSlots(ctx context.Context) error {
	_, err := eachDoc(ctx, s.sourceSlots, bson.D{}, func(slot sourceSlot) error {
		n, ok := slotNumber(slot)
		if !ok || slot.SourceID == "" {
			return nil
		}
		_, err := s.sources.UpdateOne(ctx, bson.D{{Key: "_id", Value: slot.SourceID}, {Key: "slot", Value: bson.D{{Key: "$exists", Value: false}}}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "slot", Value: n}}}})
		return err
	})
	if err != nil {
		return fmt.Errorf("carry source slots over: %w", err)
	}
	return nil
}

// slotNumber reads n out of a slot's id object_id:n.
func slotNumber(slot sourceSlot) (int, bool) {
	rest, ok := strings.CutPrefix(slot.ID, slot.ObjectID+":")
	var n int
	if _, err := fmt.Sscan(rest, &n); !ok || err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// upgradeSources puts every source into its object's range and claims a slot for each that holds
// none.
func (s *Store) upgradeSources(ctx context.Context, slots int) (int, error) {
	n, err := eachDoc(ctx, s.sources, bson.D{}, func(src Source) error {
		if err := s.listSource(ctx, &src); err != nil || src.Slot > 0 {
			return err
		}
		slot, err := s.claimSourceSlot(ctx, src.ObjectID, src.ID, slots, 0)
		if errors.Is(err, ErrSourceLimit) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = s.sources.UpdateOne(ctx, mongox.ByID(src.ID), bson.D{{Key: "$set", Value: bson.D{{Key: "slot", Value: slot}}}})
		return err
	})
	if err != nil {
		return n, fmt.Errorf("carry sources over: %w", err)
	}
	return n, nil
}

// logEntry is an entry of an earlier release's list: "<list>#<position>" holding v.
type logEntry struct {
	ID    string        `bson:"_id"`
	Value bson.RawValue `bson:"v"`
}

// upgradeListedDecisions carries over the decisions the earlier release kept in its lists
// ("dec:<object>#<n>" entries) and nowhere else.
func (s *Store) upgradeListedDecisions(ctx context.Context) (int, error) {
	n := 0
	_, err := eachDoc(ctx, s.lists, bson.D{}, func(e logEntry) error {
		list, pos, ok := strings.Cut(e.ID, "#")
		if _, err := strconv.ParseInt(pos, 10, 64); !ok || err != nil || !strings.HasPrefix(list, "dec:") {
			return nil // another list, a head hint or a key marker
		}
		var d Decision
		if err := e.Value.Unmarshal(&d); err != nil {
			return fmt.Errorf("decode listed decision %s: %w", e.ID, err)
		}
		n++
		return s.RecordDecision(ctx, &d)
	})
	if err != nil {
		return n, fmt.Errorf("carry listed decisions over: %w", err)
	}
	return n, nil
}

// eachDoc calls fn with each document of coll that filter matches (mongox.Each), and returns
// how many it handled.
func eachDoc[T any](ctx context.Context, coll *mongo.Collection, filter bson.D, fn func(T) error) (int, error) {
	n := 0
	err := mongox.Each(ctx, coll, filter, options.Find().SetProjection(withoutEvents), func(doc T) error {
		if err := fn(doc); err != nil {
			return err
		}
		n++
		return nil
	})
	return n, err
}
