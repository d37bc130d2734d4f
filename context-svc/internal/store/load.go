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
// event, and a list loaded this way records no natural keys (a redelivered decision would be
// listed again).

// LoadSources stores srcs, all of one object, in the slots and list positions after those its
// earlier loads took (an object that no create wrote), listed in that order.
func (s *Store) LoadSources(ctx context.Context, srcs []Source) error {
	if len(srcs) == 0 {
		return nil
	}
	objectID := srcs[0].ObjectID
	l := s.objectLists
	first, err := l.Len(ctx, sourceList(objectID))
	if err != nil {
		return fmt.Errorf("load sources: %w", err)
	}
	slots, docs, ids := make([]any, len(srcs)), make([]any, len(srcs)), make([]string, len(srcs))
	for i := range srcs {
		src := srcs[i]
		src.Slot, src.Seq = int(first)+i+1, first+int64(i)+1
		slots[i] = sourceSlot{ID: slotID(objectID, src.Slot), ObjectID: objectID, SourceID: src.ID}
		docs[i], ids[i] = src, src.ID
	}
	if _, err := s.sourceSlots.InsertMany(ctx, slots, options.InsertMany().SetOrdered(true)); err != nil {
		return fmt.Errorf("load source slots: %w", err)
	}
	if err := mongox.AppendMany(ctx, l, sourceList(objectID), ids); err != nil {
		return fmt.Errorf("load sources list: %w", err)
	}
	if _, err := s.sources.InsertMany(ctx, docs, options.InsertMany().SetOrdered(true)); err != nil {
		return fmt.Errorf("load sources: %w", err)
	}
	return nil
}

// LoadLinks stores links, all of one object, listed in that order.
func (s *Store) LoadLinks(ctx context.Context, links []Link) error {
	if len(links) == 0 {
		return nil
	}
	docs := make([]any, len(links))
	for i := range links {
		docs[i] = links[i]
	}
	if _, err := s.links.InsertMany(ctx, docs, options.InsertMany().SetOrdered(true)); err != nil {
		return fmt.Errorf("load links: %w", err)
	}
	if err := mongox.AppendMany(ctx, s.objectLists, linkList(links[0].ObjectID), links); err != nil {
		return fmt.Errorf("load links list: %w", err)
	}
	return nil
}

// LoadDecisions lists decisions, all of one object, in that order.
func (s *Store) LoadDecisions(ctx context.Context, ds []Decision) error {
	if len(ds) == 0 {
		return nil
	}
	for i := range ds {
		ds[i].ID = ds[i].ObjectID + ":" + ds[i].NodeID
	}
	if err := mongox.AppendMany(ctx, s.objectLists, decisionList(ds[0].ObjectID), ds); err != nil {
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
