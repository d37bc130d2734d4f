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
// event staged with it, and never updated.
type Source struct {
	ID        string    `bson:"_id"`
	ObjectID  string    `bson:"object_id"`
	Kind      string    `bson:"kind"`
	Title     string    `bson:"title"`
	URL       string    `bson:"url,omitempty"`
	Text      string    `bson:"text,omitempty"`
	CreatedAt time.Time `bson:"created_at"`
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

// InsertSource stores a new source, as one of at most limit sources of its object, with its
// events staged in outbox. The source first claims a free numbered slot by inserting it: the
// unique _id decides between concurrent creators on MongoDB and FerretDB alike, so that no more
// than limit slots, and sources, ever exist (counting and then inserting would let every creator
// that counted below the limit in). Only then are the events staged and the source inserted. It
// returns ErrSourceLimit when every slot is taken.
func (s *Store) InsertSource(ctx context.Context, src *Source, limit int, outbox events.Stager, evs ...events.Pending) error {
	slot, err := s.claimSourceSlot(ctx, src, limit)
	if err != nil {
		return err
	}
	src.Events = events.IDs(evs...)
	if err := outbox.Stage(ctx, Sources, src.ID, evs...); err != nil {
		// Nothing was written: the slot is free again.
		if _, derr := s.sourceSlots.DeleteOne(context.WithoutCancel(ctx), mongox.ByID(slot)); derr != nil {
			return fmt.Errorf("store sources: %w (its slot %s stays taken: %v)", err, slot, derr)
		}
		return err
	}
	// A failed insert keeps its slot: the insert may have happened all the same (a timeout after
	// the write), and a slot given back under a source that exists would let one source too many
	// in.
	if _, err := s.sources.InsertOne(ctx, src); err != nil {
		return fmt.Errorf("store sources: %w", err)
	}
	return nil
}

// claimSourceSlot inserts the first free slot after the object's sources, and returns its id.
// Sources are never deleted, so the slots below their count are taken (or, for sources stored
// before slots existed, stand for them).
func (s *Store) claimSourceSlot(ctx context.Context, src *Source, limit int) (string, error) {
	n, err := s.CountSources(ctx, src.ObjectID)
	if err != nil {
		return "", err
	}
	for i := int(n) + 1; i <= limit; i++ {
		slot := sourceSlot{ID: src.ObjectID + ":" + strconv.Itoa(i), ObjectID: src.ObjectID, SourceID: src.ID}
		_, err := s.sourceSlots.InsertOne(ctx, slot)
		if err == nil {
			return slot.ID, nil
		}
		if !mongox.IsDuplicateKey(err) {
			return "", fmt.Errorf("store source slots: %w", err)
		}
	}
	return "", ErrSourceLimit
}

// CountSources counts an object's sources.
func (s *Store) CountSources(ctx context.Context, objectID string) (int64, error) {
	n, err := s.sources.CountDocuments(ctx, bson.D{{Key: "object_id", Value: objectID}})
	if err != nil {
		return 0, fmt.Errorf("store sources: %w", err)
	}
	return n, nil
}

// SourcePage pages through an object's sources, oldest first.
type SourcePage struct {
	ObjectID string
	After    string // source id cursor
	Limit    int
}

// ListSources lists an object's sources (without their fetch state).
func (s *Store) ListSources(ctx context.Context, q SourcePage) ([]Source, error) {
	filter := bson.D{{Key: "object_id", Value: q.ObjectID}}
	if q.After != "" {
		filter = append(filter, bson.E{Key: "_id", Value: bson.D{{Key: "$gt", Value: q.After}}})
	}
	opts := options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(q.Limit)).SetProjection(withoutEvents)
	return mongox.FindAll[Source](ctx, s.sources, filter, opts)
}

// SourcesByID returns the object's sources among ids, in the order of ids, with their fetch
// state; unknown ids are left out.
func (s *Store) SourcesByID(ctx context.Context, objectID string, ids []string) ([]Source, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	filter := bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}, {Key: "object_id", Value: objectID}}
	found, err := mongox.FindAll[Source](ctx, s.sources, filter, options.Find().SetProjection(withoutEvents))
	if err != nil {
		return nil, err
	}
	fetches, err := mongox.FindAll[Fetch](ctx, s.fetches, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}, options.Find())
	if err != nil {
		return nil, err
	}
	fetched := make(map[string]*Fetch, len(fetches))
	for i := range fetches {
		fetched[fetches[i].SourceID] = &fetches[i]
	}
	byIDs := make(map[string]Source, len(found))
	for _, src := range found {
		src.Fetch = fetched[src.ID]
		byIDs[src.ID] = src
	}
	out := make([]Source, 0, len(ids))
	for _, id := range ids {
		if src, ok := byIDs[id]; ok {
			out = append(out, src)
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
	update := bson.D{{Key: "$set", Value: set}}
	_, err := s.fetches.UpdateOne(ctx, mongox.ByID(id), update, options.UpdateOne().SetUpsert(true))
	if mongox.IsDuplicateKey(err) {
		_, err = s.fetches.UpdateOne(ctx, mongox.ByID(id), update)
	}
	if err != nil {
		return fmt.Errorf("store fetches: %w", err)
	}
	return nil
}
