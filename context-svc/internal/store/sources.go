package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
)

// ErrSourceLimit says that every place for a source of the object is taken.
var ErrSourceLimit = errors.New("the object has as many sources as it may")

// Source is an object context source. Its document is inserted once, recording the id of the
// event staged with it, and never updated (but by the one-off backfill of sources a previous
// release stored, which records their slot).
type Source struct {
	ID        string    `bson:"_id"`
	ObjectID  string    `bson:"object_id"`
	Kind      string    `bson:"kind"`
	Title     string    `bson:"title"`
	URL       string    `bson:"url,omitempty"`
	Text      string    `bson:"text,omitempty"`
	CreatedAt time.Time `bson:"created_at"`
	// Slot is the number of the object's slot the source holds (0: none, a source stored before
	// slots whose backfill found every slot taken); Seq its position in the object's list of
	// sources (0: stored by a release before the list, and listed by the backfill).
	Slot int   `bson:"slot,omitempty"`
	Seq  int64 `bson:"seq,omitempty"`
	// Events are the ids of the events staged with the source's insert.
	Events []string `bson:"_events,omitempty"`
	// Fetch is what was last fetched from a URL source (nil: never), as SourcesByID reads it.
	Fetch *Fetch `bson:"-"`
}

// Fetch is the result of the last fetch of a URL source, in a document of its own (keyed by the
// source id), so that recording a fetch never rewrites the source document, which records event
// ids and, like every such document, is inserted once.
type Fetch struct {
	SourceID  string    `bson:"_id"`
	Content   string    `bson:"content,omitempty"`
	FetchedAt time.Time `bson:"fetched_at"`
	// Error is why the last fetch failed ("" after a good one); the content of the last good one
	// stays.
	Error string `bson:"error,omitempty"`
}

// sourceSlot is one of the numbered places of an object's sources: object_id:n, 1 ≤ n ≤ limit.
type sourceSlot struct {
	ID       string `bson:"_id"`
	ObjectID string `bson:"object_id"`
	SourceID string `bson:"source_id"`
}

func slotID(objectID string, n int) string { return objectID + ":" + strconv.Itoa(n) }

// InsertSource stores a new source, as one of at most limit sources of its object, with its
// events staged in outbox. The source first claims a free numbered slot by inserting it: the
// unique _id decides between concurrent creators on MongoDB and FerretDB alike, so that no more
// than limit slots, and sources, ever exist (counting and then inserting would let every creator
// that counted below the limit in, and counting is a scan on FerretDB). Then the source's id is
// appended to the object's list, its events staged and its document inserted: an entry whose
// insert failed names no document, and pages skip it. It returns ErrSourceLimit when every slot
// is taken, having written nothing.
func (s *Store) InsertSource(ctx context.Context, src *Source, limit int, outbox events.Stager, evs ...events.Pending) error {
	l := s.objectLists
	listed, err := l.Len(ctx, sourceList(src.ObjectID))
	if err != nil {
		return fmt.Errorf("store sources: %w", err)
	}
	if src.Slot, err = s.claimSourceSlot(ctx, src.ObjectID, src.ID, limit, listed); err != nil {
		return err
	}
	free := func(err error) error {
		if _, derr := s.sourceSlots.DeleteOne(context.WithoutCancel(ctx), mongox.ByID(slotID(src.ObjectID, src.Slot))); derr != nil {
			return fmt.Errorf("store sources: %w (its slot %d stays taken: %v)", err, src.Slot, derr)
		}
		return err
	}
	if src.Seq, err = mongox.Append(ctx, l, sourceList(src.ObjectID), src.ID); err != nil {
		return free(fmt.Errorf("store sources: %w", err))
	}
	src.Events = events.IDs(evs...)
	if err := outbox.Stage(ctx, Sources, src.ID, evs...); err != nil {
		return free(err) // nothing names the slot: the list's entry names no document
	}
	// A failed insert keeps its slot: the insert may have happened all the same (a timeout after
	// the write), and a slot given back under a source that exists would let one source too many
	// in.
	if _, err := s.sources.InsertOne(ctx, src); err != nil {
		return fmt.Errorf("store sources: %w", err)
	}
	return nil
}

// claimSourceSlot claims a free slot of the object for sourceID by inserting it, and returns its
// number. It tries the slots in turn from the one after hint (the length of the object's list:
// while no source was deleted, the first free slot), so that a create costs one insert and a
// refused one at most limit, whatever is stored. A slot already held by sourceID (a backfill run
// again) is its own.
func (s *Store) claimSourceSlot(ctx context.Context, objectID, sourceID string, limit int, hint int64) (int, error) {
	if limit < 1 {
		return 0, ErrSourceLimit
	}
	first := int(hint % int64(limit))
	for i := range limit {
		n := (first+i)%limit + 1
		slot := sourceSlot{ID: slotID(objectID, n), ObjectID: objectID, SourceID: sourceID}
		err := mongox.Insert(ctx, s.sourceSlots, slot)
		if err == nil {
			return n, nil
		}
		if !errors.Is(err, mongox.ErrTaken) {
			return 0, fmt.Errorf("store source slots: %w", err)
		}
		var held sourceSlot
		if err := mongox.FindOne(ctx, s.sourceSlots, mongox.ByID(slot.ID), &held); err == nil && held.SourceID == sourceID {
			return n, nil
		}
	}
	return 0, ErrSourceLimit
}

// SourcePage pages through an object's sources, oldest first.
type SourcePage struct {
	ObjectID string
	// After is the list position to resume after (a page's next; 0: from the first).
	After int64
	Limit int
}

// ListSources lists a page of an object's sources (without their fetch state), and the position
// to resume after (0: none left). It reads at most pageBudget entries per source asked for: a
// page of a list with many deleted entries comes back short, with a position.
func (s *Store) ListSources(ctx context.Context, q SourcePage) ([]Source, int64, error) {
	var mu sync.Mutex
	read := map[int64]*Source{}
	entries, next, err := pageForward(ctx, s.objectLists, sourceList(q.ObjectID), q.After, q.Limit, pageBudget*q.Limit,
		func(ctx context.Context, e mongox.Entry[string]) (bool, error) {
			src, err := s.source(ctx, e.Value)
			if errors.Is(err, mongox.ErrNotFound) || (err == nil && src.ObjectID != q.ObjectID) {
				return false, nil
			}
			mu.Lock()
			defer mu.Unlock()
			read[e.Seq] = src
			return err == nil, err
		})
	if err != nil {
		return nil, 0, fmt.Errorf("store sources: %w", err)
	}
	out := make([]Source, len(entries))
	for i, e := range entries {
		out[i] = *read[e.Seq]
	}
	return out, next, nil
}

// source reads one source without the ids of its events, or mongox.ErrNotFound.
func (s *Store) source(ctx context.Context, id string) (*Source, error) {
	var src Source
	if err := mongox.FindOne(ctx, s.sources, mongox.ByID(id), &src, options.FindOne().SetProjection(withoutEvents)); err != nil {
		return nil, err
	}
	return &src, nil
}

func (s *Store) fetch(ctx context.Context, id string) (*Fetch, error) {
	var f Fetch
	if err := mongox.FindOne(ctx, s.fetches, mongox.ByID(id), &f); err != nil {
		return nil, err
	}
	return &f, nil
}

// SourcesByID returns the object's sources among ids, in the order of ids, with their fetch
// state; unknown ids are left out. Each is two point reads (the source and its fetch).
func (s *Store) SourcesByID(ctx context.Context, objectID string, ids []string) ([]Source, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	found, err := readAll(ctx, s.source, ids)
	if err != nil {
		return nil, fmt.Errorf("store sources: %w", err)
	}
	var fetched []string // only URL sources are fetched
	for _, src := range found {
		if src != nil && src.ObjectID == objectID && src.URL != "" {
			fetched = append(fetched, src.ID)
		}
	}
	fetches, err := readAll(ctx, s.fetch, fetched)
	if err != nil {
		return nil, fmt.Errorf("store fetches: %w", err)
	}
	fetchOf := make(map[string]*Fetch, len(fetched))
	for i, id := range fetched {
		fetchOf[id] = fetches[i]
	}
	out := make([]Source, 0, len(ids))
	for _, src := range found {
		if src != nil && src.ObjectID == objectID {
			src.Fetch = fetchOf[src.ID]
			out = append(out, *src)
		}
	}
	return out, nil
}

// RecordFetch keeps the result of fetching a URL source. A failed fetch keeps the content of the
// last good one. Two first records of one source race to insert its document; the loser
// updates the document the winner inserted.
func (s *Store) RecordFetch(ctx context.Context, id, content, fetchErr string, at time.Time) error {
	set := bson.D{{Key: "fetched_at", Value: at}, {Key: "error", Value: fetchErr}}
	if fetchErr == "" {
		set = append(set, bson.E{Key: "content", Value: content})
	}
	if err := mongox.Upsert(ctx, s.fetches, id, bson.D{{Key: "$set", Value: set}}); err != nil {
		return fmt.Errorf("store fetches: %w", err)
	}
	return nil
}

// DeleteSource removes an object's source and frees its slot, and returns what it was
// (mongox.ErrNotFound: the object has no such source). Its entry stays in the object's list,
// naming no document: pages skip it.
func (s *Store) DeleteSource(ctx context.Context, objectID, id string) (*Source, error) {
	src, err := s.source(ctx, id)
	if err == nil && src.ObjectID != objectID {
		err = mongox.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store sources: %w", err)
	}
	res, err := s.sources.DeleteOne(ctx, mongox.ByID(id))
	if err != nil {
		return nil, fmt.Errorf("store sources: %w", err)
	}
	if res.DeletedCount == 0 {
		return nil, fmt.Errorf("store sources: %w", mongox.ErrNotFound) // a concurrent delete got it
	}
	// The slot is freed last: a failure leaves it taken by a source that is gone (one place
	// fewer), never free under a source that exists.
	if src.Slot > 0 {
		slot := bson.D{{Key: "_id", Value: slotID(objectID, src.Slot)}, {Key: "source_id", Value: id}}
		if _, err := s.sourceSlots.DeleteOne(ctx, slot); err != nil {
			return nil, fmt.Errorf("store source slots: %w", err)
		}
	}
	if _, err := s.fetches.DeleteOne(ctx, mongox.ByID(id)); err != nil {
		s.log.Warn("deleting a source's fetch failed", "source_id", id, "error", err)
	}
	return src, nil
}
