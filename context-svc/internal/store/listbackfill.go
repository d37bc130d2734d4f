package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// listBackfill names the marker of BackfillLists in the migrations collection.
const listBackfill = "object_lists"

// backfillBatchSize is how many documents a backfill cursor fetches at once: its memory.
const backfillBatchSize = 200

// Listed counts what BackfillLists listed.
type Listed struct {
	Sources, Links, Decisions int
}

// BackfillLists lists the sources, links and decisions that a release before the lists stored
// (lists.go), once per database: it walks each collection with a cursor, in batches, and appends
// each document to its object's list under its own id (mongox.AppendOnce), so that a run cut
// short and run again, or two replicas starting together, list nothing twice. Sources stored by
// this release carry their position (Seq) and are passed over. Each source also gets its slot
// number written, so that deleting it frees that slot: first from the slots a previous release
// claimed, then, for a source stored before slots, by claiming a free one (none left: it keeps
// no slot, as the object already holds more sources than the limit). Then it leaves a marker,
// and later calls do nothing. It costs one pass over the three collections and the slots, once.
func (s *Store) BackfillLists(ctx context.Context, slots int) (Listed, error) {
	var n Listed
	err := mongox.FindOne(ctx, s.migrations, mongox.ByID(listBackfill), &migration{})
	switch {
	case err == nil:
		return n, nil
	case !errors.Is(err, mongox.ErrNotFound):
		return n, fmt.Errorf("read migration marker: %w", err)
	}
	if err := s.backfillSlots(ctx); err != nil {
		return n, err
	}
	if n.Sources, err = s.backfillSources(ctx, slots); err != nil {
		return n, err
	}
	if n.Links, err = eachDoc(ctx, s.links, bson.D{}, func(l Link) error { return s.listLink(ctx, &l) }); err != nil {
		return n, fmt.Errorf("backfill links: %w", err)
	}
	if n.Decisions, err = eachDoc(ctx, s.decisions, bson.D{}, func(d Decision) error { return s.RecordDecision(ctx, &d) }); err != nil {
		return n, fmt.Errorf("backfill decisions: %w", err)
	}
	if err := mongox.InsertOnce(ctx, s.migrations, migration{ID: listBackfill, DoneAt: time.Now()}); err != nil {
		return n, fmt.Errorf("write migration marker: %w", err)
	}
	return n, nil
}

// backfillSlots writes into each source a previous release stored the number of the slot it
// claimed (slot ids are object_id:n).
func (s *Store) backfillSlots(ctx context.Context) error {
	_, err := eachDoc(ctx, s.sourceSlots, bson.D{}, func(slot sourceSlot) error {
		n, ok := slotNumber(slot)
		if !ok || slot.SourceID == "" {
			return nil
		}
		_, err := s.sources.UpdateOne(ctx, bson.D{{Key: "_id", Value: slot.SourceID}, {Key: "seq", Value: bson.D{{Key: "$exists", Value: false}}}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "slot", Value: n}}}})
		return err
	})
	if err != nil {
		return fmt.Errorf("backfill source slots: %w", err)
	}
	return nil
}

// slotNumber reads n out of a slot's id object_id:n.
func slotNumber(slot sourceSlot) (int, bool) {
	prefix := slot.ObjectID + ":"
	if len(slot.ID) <= len(prefix) || slot.ID[:len(prefix)] != prefix {
		return 0, false
	}
	var n int
	if _, err := fmt.Sscan(slot.ID[len(prefix):], &n); err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// backfillSources lists the sources stored before the lists, in the order the store returns them
// (the order of their inserts), and claims a slot for each that holds none.
func (s *Store) backfillSources(ctx context.Context, slots int) (int, error) {
	l := s.objectLists
	n, err := eachDoc(ctx, s.sources, bson.D{{Key: "seq", Value: bson.D{{Key: "$exists", Value: false}}}}, func(src Source) error {
		seq, _, err := mongox.AppendOnce(ctx, l, sourceList(src.ObjectID), src.ID, src.ID)
		if err != nil || src.Slot > 0 {
			return err
		}
		slot, err := s.claimSourceSlot(ctx, src.ObjectID, src.ID, slots, seq-1)
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
		return n, fmt.Errorf("backfill sources: %w", err)
	}
	return n, nil
}

// eachDoc calls fn with each document of coll that filter matches, read with a cursor in batches
// of backfillBatchSize, and returns how many it handled.
func eachDoc[T any](ctx context.Context, coll *mongo.Collection, filter bson.D, fn func(T) error) (int, error) {
	cur, err := coll.Find(ctx, filter, options.Find().SetBatchSize(backfillBatchSize).SetProjection(withoutEvents))
	if err != nil {
		return 0, err
	}
	defer cur.Close(ctx)
	n := 0
	for cur.Next(ctx) {
		var doc T
		if err := cur.Decode(&doc); err != nil {
			return n, err
		}
		if err := fn(doc); err != nil {
			return n, err
		}
		n++
	}
	return n, cur.Err()
}
