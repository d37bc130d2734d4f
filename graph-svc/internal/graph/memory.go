package graph

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/kljensen/snowball/english"

	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/mongox"
)

// Bounds of the relationship-memory index (docs/architecture.md, "Memory search"; docs/api.md
// names those a caller sees).
const (
	// MaxIndexedStems is how many stems of a node get a posting, which is what makes a node
	// found by a stem: its title's stems first, then its body's most distinctive (count times
	// length). This bounds a node's one insert.
	MaxIndexedStems = 32
	// MaxScoredStems is how many stems (with their counts) a node's entry keeps for ranking: a
	// node found by one query term is scored on every term it holds among these.
	MaxScoredStems = 256
	// MaxExcerpt bounds the excerpt of a node's body a hit shows, in bytes.
	MaxExcerpt = 280
)

// analyze splits text into lower-case words and stems them (Snowball English), dropping stop
// words; it returns each distinct stem in order of first occurrence, the stems' counts and the
// text's length in stems.
func analyze(text string) (order []string, tf map[string]int, length int) {
	tf = map[string]int{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	}) {
		if len(w) > 64 || english.IsStopWord(w) {
			continue
		}
		st := english.Stem(w, false)
		if st == "" {
			continue
		}
		length++
		if tf[st] == 0 {
			order = append(order, st)
		}
		tf[st]++
	}
	return order, tf, length
}

// memoryEntry is what a node's postings hold (the peer aside, which depends on whose index it
// is), and the stems that get a posting.
func memoryEntry(n *store.Node) (store.MemoryEntry, []string) {
	titled, _, _ := analyze(n.Title)
	order, tf, length := analyze(n.Title + "\n" + n.Body)
	first := make(map[string]int, len(order))
	for i, st := range order {
		first[st] = i
	}
	inTitle := make(map[string]bool, len(titled))
	for _, st := range titled {
		inTitle[st] = true
	}
	// Indexed: the title's stems, then the most distinctive of the body (a frequent long word
	// says more of a node than a short one).
	ranked := slices.Clone(order)
	slices.SortStableFunc(ranked, func(a, b string) int {
		if inTitle[a] != inTitle[b] {
			if inTitle[a] {
				return -1
			}
			return 1
		}
		return tf[b]*len(b) - tf[a]*len(a)
	})
	indexed := ranked[:min(len(ranked), MaxIndexedStems)]
	// Scored: the indexed stems, then the others by count, then by first occurrence.
	rest := slices.Clone(ranked[len(indexed):])
	slices.SortStableFunc(rest, func(a, b string) int { return cmp.Or(tf[b]-tf[a], first[a]-first[b]) })
	scored := append(slices.Clone(indexed), rest[:min(len(rest), MaxScoredStems-len(indexed))]...)
	e := store.MemoryEntry{NodeID: n.ID, ThreadID: n.ThreadID, Type: n.Type, AuthorID: n.AuthorID,
		CreatedAt: n.CreatedAt, ValidFrom: n.ValidFrom, ValidUntil: n.ValidUntil, MessageID: n.MessageID,
		SourceID: n.SourceID, Title: n.Title, Excerpt: truncate(n.Body, MaxExcerpt), Len: length, Stems: scored,
		Counts: make([]int, len(scored))}
	for i, st := range scored {
		e.Counts[i] = tf[st]
	}
	return e, indexed
}

// indexNode adds a node to the memory index of each participant who may see it (the other side
// never gets an owner_only node). Guidance is not a node and is never indexed. The work is one
// read and one move of the participants' index stats and one insert of all the postings (a
// posting per indexed stem): the same whatever the node's length and whatever the index holds.
func (s *Service) indexNode(ctx context.Context, n *store.Node, participants []string) error {
	return s.indexNodes(ctx, []*store.Node{n}, [][]string{participants})
}

// indexNodes indexes a batch of nodes, each for its participants: one read and one move of every
// object's stats, and one insert of all the batch's postings, so that a projected batch costs
// three commands whatever nodes and objects it holds.
func (s *Service) indexNodes(ctx context.Context, nodes []*store.Node, participants [][]string) error {
	var batches []store.MemoryBatch
	at := map[string]int{} // an object's batch
	for i, n := range nodes {
		e, indexed := memoryEntry(n)
		for _, obj := range readers(n, participants[i]) {
			b, ok := at[obj]
			if !ok {
				b, at[obj] = len(batches), len(batches)
				batches = append(batches, store.MemoryBatch{ObjectID: obj})
			}
			e.PeerID = peerOf(participants[i], obj)
			batches[b].Entries, batches[b].Indexed = append(batches[b].Entries, e), append(batches[b].Indexed, indexed)
		}
	}
	if err := s.Store.IndexMemories(ctx, batches); err != nil {
		return fmt.Errorf("index nodes: %w", err)
	}
	return nil
}

// indexInThread indexes a node for the participants of its thread, read by id (one point read).
// A thread graph-svc has no record of (none is written through the routes, which read the
// thread first) leaves the node to its author's index.
func (s *Service) indexInThread(ctx context.Context, n *store.Node) error {
	th, err := s.Store.Thread(ctx, n.ThreadID)
	if errors.Is(err, mongox.ErrNotFound) {
		return s.indexNode(ctx, n, []string{n.AuthorID})
	}
	if err != nil {
		return err
	}
	return s.indexNode(ctx, n, th.Participants)
}

// postingIDs are the _ids of a node's postings in the memory index of each of objects that
// indexed it (those it is visible to), as indexNodes wrote them.
func postingIDs(n *store.Node, objects []string) []string {
	_, indexed := memoryEntry(n)
	var ids []string
	for _, obj := range readers(n, objects) {
		for _, st := range indexed {
			ids = append(ids, store.PostingID(obj, st, n.CreatedAt, n.ID))
		}
	}
	return ids
}

// readers are the objects of objects, each once, that may see n: those whose index holds it.
func readers(n *store.Node, objects []string) []string {
	var out []string
	for i, obj := range objects {
		if !slices.Contains(objects[:i], obj) && visibleTo(n, obj) {
			out = append(out, obj)
		}
	}
	return out
}

func peerOf(participants []string, obj string) string {
	for _, p := range participants {
		if p != obj {
			return p
		}
	}
	return ""
}
