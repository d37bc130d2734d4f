package store

import (
	"context"
	"fmt"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// The schedule collection keys two lists by time, so that the sender's poll and the retention
// sweep are each one _id range from the start up to a time:
//
//   - "due|<next look>|<delivery>": when to look at a pending delivery again. The delivery stays
//     the truth; an entry only says when to look. Every pending delivery has an entry no later
//     than its next attempt; an entry may outlive its delivery's pending state (the poll deletes
//     it then), and a delivery may have more than one (a writer that stopped between the insert
//     of the new entry and the delete of the old): the poll moves or deletes the extra ones.
//   - "kept|<created>|<delivery>": every delivery, by when it was made, for the sweep that
//     deletes final deliveries past the retention.
//
// Times are to the millisecond (what a stored time keeps), so that a key made again from a
// delivery read back is the key its entry was inserted under.
const (
	dueScope  = "due"
	keptScope = "kept"
)

// DueEntry is a delivery's place in the schedule.
type DueEntry struct {
	Key   string    `bson:"_id"`
	ID    string    `bson:"d"` // the delivery id
	DueAt time.Time `bson:"at"`
}

// Due is the schedule entry of delivery id at t.
func Due(id string, t time.Time) DueEntry {
	t = t.UTC().Truncate(time.Millisecond)
	return DueEntry{Key: mongox.Key(dueScope, mongox.Time(t), mongox.IDPart(id)), ID: id, DueAt: t}
}

// kept is a delivery's entry in the list the retention sweep reads.
type kept struct {
	Key string `bson:"_id"`
	ID  string `bson:"d"`
}

func keptEntry(d *Delivery) kept {
	return kept{Key: mongox.Key(keptScope, mongox.Time(d.CreatedAt.UTC().Truncate(time.Millisecond)), mongox.IDPart(d.ID)), ID: d.ID}
}

// InsertScheduled stores new deliveries with their schedule entries, due at their next attempt
// and kept from their creation, and reports which deliveries got in: the entries first, in one
// command, so that no delivery is ever pending without its entry, then the deliveries in another.
// The entries it added for a delivery that was already there (a redelivered event, a repeated
// recover) are deleted again, in a third command only then.
func (s *Store) InsertScheduled(ctx context.Context, ds []*Delivery) ([]bool, error) {
	var docs []any
	var keys []string
	var of []int // the delivery of each entry
	for i, d := range ds {
		if d.NextAttemptAt != nil {
			e := Due(d.ID, *d.NextAttemptAt)
			docs, keys, of = append(docs, e), append(keys, e.Key), append(of, i)
		}
		k := keptEntry(d)
		docs, keys, of = append(docs, k), append(keys, k.Key), append(of, i)
	}
	added, err := mongox.InsertNew(ctx, s.c(Schedule), docs)
	if err != nil {
		return nil, fmt.Errorf("schedule deliveries: %w", err)
	}
	inserted, err := s.InsertDeliveries(ctx, ds)
	if err != nil {
		return nil, err
	}
	var stray []string
	for j, key := range keys {
		if added[j] && !inserted[of[j]] {
			stray = append(stray, key)
		}
	}
	return inserted, mongox.DeleteIn(ctx, s.c(Schedule), stray)
}

// InsertDue adds entries to the schedule in one command; an entry already there is kept as it is.
func (s *Store) InsertDue(ctx context.Context, entries ...DueEntry) error {
	if _, err := mongox.InsertNew(ctx, s.c(Schedule), entries); err != nil {
		return fmt.Errorf("schedule deliveries: %w", err)
	}
	return nil
}

// DueEntries returns up to limit entries due at now, the longest due first, after the entry
// with key after when it is set (the last of the previous page): one range read.
func (s *Store) DueEntries(ctx context.Context, after string, now time.Time, limit int) ([]DueEntry, error) {
	scope := mongox.Scope(dueScope)
	end := now.UTC().Truncate(time.Millisecond).Add(time.Millisecond)
	entries, err := mongox.Find[DueEntry](ctx, s.c(Schedule), mongox.Range{Scope: scope, After: after, Before: scope + mongox.Time(end), Limit: limit})
	if err != nil {
		return nil, fmt.Errorf("read due deliveries: %w", err)
	}
	return entries, nil
}

// DeleteDue removes entries of deliveries that are final or gone, in one command (per
// mongox.MaxIDIn entries).
func (s *Store) DeleteDue(ctx context.Context, entries ...DueEntry) error {
	keys := make([]string, len(entries))
	for i, e := range entries {
		keys[i] = e.Key
	}
	return mongox.DeleteIn(ctx, s.c(Schedule), keys)
}

// sweepBatch is how many deliveries one step of the sweep reads and deletes.
const sweepBatch = 500

// SweepDeliveries deletes the final deliveries created before cutoff, reading the kept list
// from its start in pages: a page of entries, one find of their deliveries, one delete of the
// final ones and one of their entries. A delivery still pending keeps its entry for a later
// sweep.
func (s *Store) SweepDeliveries(ctx context.Context, cutoff time.Time) (int64, error) {
	scope := mongox.Scope(keptScope)
	r := mongox.Range{Scope: scope, Before: scope + mongox.Time(cutoff.UTC().Truncate(time.Millisecond)), Limit: sweepBatch}
	var swept int64
	for {
		entries, err := mongox.Find[kept](ctx, s.c(Schedule), r)
		if err != nil || len(entries) == 0 {
			return swept, err
		}
		r.After = entries[len(entries)-1].Key
		ids := make([]string, len(entries))
		for i, e := range entries {
			ids[i] = e.ID
		}
		found, err := s.DeliveriesByID(ctx, ids)
		if err != nil {
			return swept, err
		}
		var gone, keys []string
		for _, e := range entries {
			d := found[e.ID]
			if d != nil && d.Status == StatusPending {
				continue
			}
			if d != nil {
				gone = append(gone, d.ID)
			}
			keys = append(keys, e.Key)
		}
		if err := mongox.DeleteIn(ctx, s.c(Deliveries), gone); err != nil {
			return swept, err
		}
		if err := mongox.DeleteIn(ctx, s.c(Schedule), keys); err != nil {
			return swept, err
		}
		swept += int64(len(gone))
		if len(entries) < sweepBatch {
			return swept, nil
		}
	}
}
