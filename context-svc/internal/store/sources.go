package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
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
	// slots whose upgrade found every slot taken).
	Slot int `bson:"slot,omitempty"`
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
// that counted below the limit in, and counting is a scan on FerretDB). Then the source is put
// into the object's range, its events staged and its document inserted: an entry whose insert
// failed names no document, and pages skip it. It returns ErrSourceLimit when every slot is
// taken, having written nothing.
func (s *Store) InsertSource(ctx context.Context, src *Source, limit int, outbox events.Stager, evs ...events.Pending) error {
	// The object's entries, bounded by the limit: while no source was deleted, the slot after
	// their count is the first free one.
	held, err := page[string](ctx, s, mongox.Range{Scope: mongox.Scope(src.ObjectID, sourcesPart), Limit: max(limit, 1)})
	if err != nil {
		return fmt.Errorf("store sources: %w", err)
	}
	if src.Slot, err = s.claimSourceSlot(ctx, src.ObjectID, src.ID, limit, len(held)); err != nil {
		return err
	}
	free := func(err error) error {
		if _, derr := s.sourceSlots.DeleteOne(context.WithoutCancel(ctx), mongox.ByID(slotID(src.ObjectID, src.Slot))); derr != nil {
			return fmt.Errorf("store sources: %w (its slot %d stays taken: %v)", err, src.Slot, derr)
		}
		return err
	}
	if err := s.listSource(ctx, src); err != nil {
		return free(err)
	}
	src.Events = events.IDs(evs...)
	if err := outbox.Stage(ctx, Sources, src.ID, evs...); err != nil {
		return free(err) // nothing names the slot: the range's entry names no document
	}
	// A failed insert keeps its slot: the insert may have happened all the same (a timeout after
	// the write), and a slot given back under a source that exists would let one source too many
	// in.
	if _, err := s.sources.InsertOne(ctx, src); err != nil {
		return fmt.Errorf("store sources: %w", err)
	}
	return nil
}

func sourceKey(objectID, id string) string {
	return mongox.Key(objectID, sourcesPart, mongox.IDPart(id))
}

// listSource puts a source into its object's range; listing it again is a no-op.
func (s *Store) listSource(ctx context.Context, src *Source) error {
	if err := s.insertEntry(ctx, sourceKey(src.ObjectID, src.ID), src.ID); err != nil {
		return fmt.Errorf("store sources list: %w", err)
	}
	return nil
}

// claimSourceSlot claims a free slot of the object for sourceID by inserting it, and returns its
// number. It tries the slots in turn from the one after first (the count of the object's
// sources: while none was deleted, the first free slot), so that a create costs one insert and a
// refused one at most limit, whatever is stored. A slot already held by sourceID (an upgrade run again) is its own.
func (s *Store) claimSourceSlot(ctx context.Context, objectID, sourceID string, limit, first int) (int, error) {
	if limit < 1 {
		return 0, ErrSourceLimit
	}
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
	// After is the id of the previous page's last source ("": from the first).
	After string
	Limit int
}

// ListSources lists a page of an object's sources (without their fetch state), and the id to
// resume after ("": none left): one find of the object's range and one of the sources it names.
// An entry whose source is gone (deleted, or a create that failed) is skipped, so a page may come
// back short with a next id.
func (s *Store) ListSources(ctx context.Context, q SourcePage) ([]Source, string, error) {
	r := mongox.Range{Scope: mongox.Scope(q.ObjectID, sourcesPart), Limit: q.Limit + 1}
	if q.After != "" {
		r.After = sourceKey(q.ObjectID, q.After)
	}
	ids, err := page[string](ctx, s, r)
	if err != nil {
		return nil, "", fmt.Errorf("store sources: %w", err)
	}
	next := ""
	if len(ids) > q.Limit {
		ids = ids[:q.Limit]
		next = ids[q.Limit-1]
	}
	found, err := s.sourcesIn(ctx, q.ObjectID, ids)
	if err != nil {
		return nil, "", err
	}
	return found, next, nil
}

// sourcesIn reads the object's sources among ids (without the ids of their events) in one find,
// in the order of ids; unknown ids and other objects' sources are left out.
func (s *Store) sourcesIn(ctx context.Context, objectID string, ids []string) ([]Source, error) {
	docs, err := mongox.FindIn[Source](ctx, s.sources, ids, options.Find().SetProjection(withoutEvents))
	if err != nil {
		return nil, fmt.Errorf("store sources: %w", err)
	}
	byID := make(map[string]Source, len(docs))
	for _, d := range docs {
		if d.ObjectID == objectID {
			byID[d.ID] = d
		}
	}
	out := make([]Source, 0, len(ids))
	for _, id := range ids {
		if d, ok := byID[id]; ok {
			out = append(out, d)
		}
	}
	return out, nil
}

// source reads one source without the ids of its events, or mongox.ErrNotFound.
func (s *Store) source(ctx context.Context, id string) (*Source, error) {
	var src Source
	if err := mongox.FindOne(ctx, s.sources, mongox.ByID(id), &src, options.FindOne().SetProjection(withoutEvents)); err != nil {
		return nil, err
	}
	return &src, nil
}

// SourcesByID returns the object's sources among ids, in the order of ids, with their fetch
// state; unknown ids are left out. Two finds: the sources, and the fetches of the URL ones.
func (s *Store) SourcesByID(ctx context.Context, objectID string, ids []string) ([]Source, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	found, err := s.sourcesIn(ctx, objectID, ids)
	if err != nil {
		return nil, err
	}
	var fetched []string // only URL sources are fetched
	for _, src := range found {
		if src.URL != "" {
			fetched = append(fetched, src.ID)
		}
	}
	fetches, err := mongox.FindIn[Fetch](ctx, s.fetches, fetched)
	if err != nil {
		return nil, fmt.Errorf("store fetches: %w", err)
	}
	fetchOf := make(map[string]*Fetch, len(fetches))
	for i := range fetches {
		fetchOf[fetches[i].SourceID] = &fetches[i]
	}
	for i := range found {
		found[i].Fetch = fetchOf[found[i].ID]
	}
	return found, nil
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

// DeleteSource removes an object's source, its entry in the object's range and its slot, and
// returns what it was (mongox.ErrNotFound: the object has no such source).
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
	// An entry left by a failure here names no document: pages skip it.
	if _, err := s.ranges.DeleteOne(ctx, mongox.ByID(sourceKey(objectID, id))); err != nil {
		return nil, fmt.Errorf("store sources list: %w", err)
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
