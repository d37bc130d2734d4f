package store

import (
	"context"
	"fmt"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/mongox"
)

// upgradePage is how many documents of an earlier layout an upgrade reads per command.
const upgradePage = 500

// UpgradeMemory carries the memory index of earlier releases (collection memory_index: entries
// "e|<object>|<position>" and presence marks) over to postings, once: every entry becomes the
// postings of its first indexedStems stems (the indexed ones, which that layout kept first) and
// its node's scored stems (IndexMemory), then the old collection is dropped. A run cut short runs again from the start: postings are
// inserted once each and the stats count only those new, so nothing is indexed twice.
func (s *Store) UpgradeMemory(ctx context.Context, indexedStems int) error {
	old := s.c(MemoryIndex)
	r := mongox.Range{Scope: mongox.Scope("e"), Limit: upgradePage}
	err := mongox.Pages(ctx, old, r, postingDoc.id, func(docs []postingDoc) error {
		byObject := map[string][]MemoryEntry{}
		for _, d := range docs {
			obj, _, ok := strings.Cut(strings.TrimPrefix(d.ID, "e|"), "|")
			if ok && d.NodeID != "" {
				byObject[obj] = append(byObject[obj], d.MemoryEntry)
			}
		}
		for obj, entries := range byObject {
			indexed := make([][]string, len(entries))
			for i, e := range entries {
				indexed[i] = e.Stems[:min(len(e.Stems), indexedStems)]
			}
			if err := s.IndexMemory(ctx, obj, entries, indexed); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("upgrade memory index: %w", err)
	}
	if err := old.Drop(ctx); err != nil {
		return fmt.Errorf("upgrade memory index: drop the old index: %w", err)
	}
	return nil
}

// postingsUpgraded is the _id of the record that UpgradePostings ran to its end.
var postingsUpgraded = mongox.Key("u", "postings")

// UpgradePostings carries the postings of the previous layout over, once: a posting written
// before postings carried the index's stats gets its object's stats as they are now, and the
// posting of a node a decision superseded gets the node's validity fact. It reads the postings a
// page at a time, with one find of the page's stats and one of its facts, and sets what they
// lack by _id; a run cut short runs again from the start (it sets what it set before), and a
// run that ends leaves a record the next ones stop at. Run it after UpgradeMemory, whose
// postings it completes too.
func (s *Store) UpgradePostings(ctx context.Context) error {
	done, err := s.find(ctx, MemoryPostings, postingsUpgraded, &bson.Raw{})
	if err != nil {
		return fmt.Errorf("upgrade memory postings: %w", err)
	}
	if done {
		return nil
	}
	r := mongox.Range{Scope: mongox.Scope("p"), Limit: upgradePage}
	if err := mongox.Pages(ctx, s.c(MemoryPostings), r, postingDoc.id, func(docs []postingDoc) error {
		return s.upgradePostingsPage(ctx, docs)
	}); err != nil {
		return fmt.Errorf("upgrade memory postings: %w", err)
	}
	return mongox.InsertOnce(ctx, s.c(MemoryPostings), bson.D{{Key: "_id", Value: postingsUpgraded}})
}

// upgradePostingsPage completes a page of postings: their stats by object, their validity facts
// by node.
func (s *Store) upgradePostingsPage(ctx context.Context, docs []postingDoc) error {
	statless := map[string][]string{} // postings without stats, by their stats' _id
	byNode := map[string][]string{}
	var statIDs, nodes []string
	for _, d := range docs {
		if d.Nodes == 0 {
			parts := strings.SplitN(d.ID, mongox.Sep, 3) // "p", the object's key part, the rest
			id := mongox.Key("n", parts[1])
			if statless[id] == nil {
				statIDs = append(statIDs, id)
			}
			statless[id] = append(statless[id], d.ID)
		}
		if byNode[d.NodeID] == nil {
			nodes = append(nodes, d.NodeID)
		}
		byNode[d.NodeID] = append(byNode[d.NodeID], d.ID)
	}
	stats, err := mongox.FindIn[MemoryStats](ctx, s.c(MemoryPostings), statIDs) // no find for no ids
	if err != nil {
		return err
	}
	of := make(map[string]MemoryStats, len(stats))
	for _, st := range stats {
		of[st.ID] = st
	}
	for _, id := range statIDs {
		st := of[id]
		if err := s.setPostings(ctx, statless[id], bson.D{{Key: "nd", Value: max(st.Nodes, 1)}, {Key: "fi", Value: st.First}}); err != nil {
			return err
		}
	}
	invs, err := s.Invalidations(ctx, nodes)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if inv := invs[n]; inv != nil {
			if err := s.SupersedePostings(ctx, byNode[n], inv.InvalidAt, inv.By); err != nil {
				return err
			}
		}
	}
	return nil
}
