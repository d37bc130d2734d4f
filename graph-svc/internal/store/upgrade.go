package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/svcdev/svc/pkg/mongox"
)

// upgradePage is how many documents of an earlier layout an upgrade reads per command.
const upgradePage = 500

// UpgradeMemory carries the memory index of earlier releases (collection memory_index: entries
// "e|<object>|<position>" and presence marks) over to postings, once: every entry becomes the
// postings of its first indexedStems stems (the indexed ones, which that layout kept first),
// then the old collection is dropped. A run cut short runs again from the start: postings are
// inserted once each and the stats count only those new, so nothing is indexed twice.
func (s *Store) UpgradeMemory(ctx context.Context, indexedStems int) error {
	old := s.c(MemoryIndex)
	r := mongox.Range{Scope: mongox.Scope("e"), Limit: upgradePage}
	for {
		docs, err := mongox.Find[postingDoc](ctx, old, r)
		if err != nil {
			return fmt.Errorf("upgrade memory index: %w", err)
		}
		if len(docs) == 0 {
			break
		}
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
				return fmt.Errorf("upgrade memory index: %w", err)
			}
		}
		r.After = docs[len(docs)-1].ID
	}
	if err := old.Drop(ctx); err != nil {
		return fmt.Errorf("upgrade memory index: drop the old index: %w", err)
	}
	return nil
}
