package store

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// The Load functions store many documents of one object at once, as the writes above would, in a
// few inserts of many documents each: for bulk loads (the scale benchmark's preload, through
// app.Preload) of an object that no one else writes meanwhile. They check no limit and stage no
// event.

// LoadSources stores srcs, all of one object, in the slots after those its earlier loads took
// (an object that no create wrote), in its range.
func (s *Store) LoadSources(ctx context.Context, srcs []Source) error {
	if len(srcs) == 0 {
		return nil
	}
	objectID := srcs[0].ObjectID
	// Bounded by the object's sources limit, which its earlier loads kept to.
	held, err := page[string](ctx, s, mongox.Range{Scope: mongox.Scope(objectID, sourcesPart)})
	if err != nil {
		return fmt.Errorf("load sources: %w", err)
	}
	first := len(held)
	slots, docs, entries := make([]any, len(srcs)), make([]any, len(srcs)), make([]any, len(srcs))
	for i := range srcs {
		src := srcs[i]
		src.Slot = first + i + 1
		slots[i] = sourceSlot{ID: slotID(objectID, src.Slot), ObjectID: objectID, SourceID: src.ID}
		docs[i], entries[i] = src, entry[string]{Key: sourceKey(objectID, src.ID), Value: src.ID}
	}
	if _, err := s.sourceSlots.InsertMany(ctx, slots, options.InsertMany().SetOrdered(true)); err != nil {
		return fmt.Errorf("load source slots: %w", err)
	}
	if _, err := s.ranges.InsertMany(ctx, entries, options.InsertMany().SetOrdered(true)); err != nil {
		return fmt.Errorf("load sources list: %w", err)
	}
	if _, err := s.sources.InsertMany(ctx, docs, options.InsertMany().SetOrdered(true)); err != nil {
		return fmt.Errorf("load sources: %w", err)
	}
	return nil
}

// LoadLinks stores links, all of one object, in its range.
func (s *Store) LoadLinks(ctx context.Context, links []Link) error {
	if len(links) == 0 {
		return nil
	}
	docs, entries := make([]any, len(links)), make([]any, len(links))
	for i := range links {
		docs[i], entries[i] = links[i], entry[Link]{Key: linkKey(&links[i]), Value: links[i]}
	}
	if _, err := s.links.InsertMany(ctx, docs, options.InsertMany().SetOrdered(true)); err != nil {
		return fmt.Errorf("load links: %w", err)
	}
	if _, err := s.ranges.InsertMany(ctx, entries, options.InsertMany().SetOrdered(true)); err != nil {
		return fmt.Errorf("load links list: %w", err)
	}
	return nil
}

// LoadDecisions stores decisions, all of one object, in its range.
func (s *Store) LoadDecisions(ctx context.Context, ds []Decision) error {
	if len(ds) == 0 {
		return nil
	}
	entries := make([]any, len(ds))
	for i := range ds {
		d := ds[i]
		d.ID = d.ObjectID + ":" + d.NodeID
		entries[i] = entry[Decision]{Key: mongox.Key(d.ObjectID, decisionsPart, mongox.Time(d.CreatedAt), mongox.IDPart(d.NodeID)), Value: d}
	}
	if _, err := s.ranges.InsertMany(ctx, entries, options.InsertMany().SetOrdered(false)); err != nil && !mongox.OnlyDuplicateKeys(err) {
		return fmt.Errorf("load decisions: %w", err)
	}
	return nil
}

// LoadVersions stores the versions after the object's current one: each a copy of the current
// profile with the text text(version), as an llm_txt write leaves it.
func (s *Store) LoadVersions(ctx context.Context, objectID string, n int, text func(version int) string) error {
	cur, err := s.Profile(ctx, objectID)
	if err != nil || n < 1 {
		return err
	}
	docs := make([]any, n)
	for i := range n {
		p := *cur
		p.Version = cur.Version + 1 + i
		p.ID, p.Change, p.LLMTxt, p.Events = VersionID(objectID, p.Version), ChangeLLMTxt, text(p.Version), nil
		docs[i] = p
	}
	if _, err := s.versions.InsertMany(ctx, docs, options.InsertMany().SetOrdered(true)); err != nil {
		return fmt.Errorf("load versions: %w", err)
	}
	return s.advanceHead(ctx, objectID, cur.Version+n)
}
