package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/kljensen/snowball/english"

	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/mongox"
)

// Bounds of the relationship-memory index (docs/architecture.md, "Memory search"; docs/api.md
// names those a caller sees).
const (
	// MaxIndexedStems is how many stems of a node get presence marks, which is what makes a
	// node found by a stem: its title's stems first, then its body's most distinctive (count
	// times length). With MemoryLevels marks each, this bounds a node's one insert.
	MaxIndexedStems = 32
	// MaxScoredStems is how many stems (with their counts) a node's entry keeps for ranking: a
	// node found by one query term is scored on every term it holds among these.
	MaxScoredStems = 256
	// MaxExcerpt bounds the excerpt of a node's body a hit shows, in bytes.
	MaxExcerpt = 280
	// memoryHeads and memoryMarks bound what a process remembers of the index: the newest
	// position of an object's index and presence marks known to exist, so that a warm writer
	// sends one insert (and the head hint) per participant and no mark twice.
	memoryHeads = 10000
	memoryMarks = 200000
)

// memoryCache is what the process remembers of the index to keep its writes to one insert.
type memoryCache struct {
	once  sync.Once
	heads *lru.Cache[string, int64]
	marks *lru.Cache[string, struct{}]
}

func (m *memoryCache) init() {
	m.once.Do(func() {
		m.heads, _ = lru.New[string, int64](memoryHeads)
		m.marks, _ = lru.New[string, struct{}](memoryMarks)
	})
}

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

// memoryEntry is what a node's index entry holds (the peer aside, which depends on whose index
// it is), and the stems that get presence marks.
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
	slices.SortStableFunc(rest, func(a, b string) int {
		if tf[a] != tf[b] {
			return tf[b] - tf[a]
		}
		return first[a] - first[b]
	})
	scored := append(slices.Clone(indexed), rest[:min(len(rest), MaxScoredStems-len(indexed))]...)
	e := store.MemoryEntry{NodeID: n.ID, ThreadID: n.ThreadID, Type: n.Type, AuthorID: n.AuthorID,
		CreatedAt: n.CreatedAt, ValidFrom: n.ValidFrom, ValidUntil: n.ValidUntil, MessageID: n.MessageID,
		SourceID: n.SourceID, Title: n.Title, Excerpt: excerpt(n.Body), Len: length, Stems: scored,
		Counts: make([]int, len(scored))}
	for i, st := range scored {
		e.Counts[i] = tf[st]
	}
	return e, indexed
}

// excerpt is the start of a body, cut at a character boundary.
func excerpt(body string) string {
	if len(body) <= MaxExcerpt {
		return body
	}
	cut := MaxExcerpt
	for cut > 0 && !utf8.RuneStart(body[cut]) {
		cut--
	}
	return body[:cut]
}

// indexNode adds a node to the memory index of each participant who may see it (the other side
// never gets an owner_only node). Guidance is not a node and is never indexed. Per participant
// the work is one insert (the entry and its new presence marks) and one move of the head hint,
// plus one read of the hint when the process does not remember the object's position: the same
// whatever the node's length and whatever the index holds.
func (s *Service) indexNode(ctx context.Context, n *store.Node, participants []string) error {
	e, indexed := memoryEntry(n)
	for i, obj := range participants {
		if slices.Contains(participants[:i], obj) || !visibleTo(n, obj) {
			continue
		}
		e.PeerID = peerOf(participants, obj)
		if err := s.indexFor(ctx, obj, e, indexed); err != nil {
			return fmt.Errorf("index node %s: %w", n.ID, err)
		}
	}
	return nil
}

// indexNodes indexes a batch of nodes, each for its participants: per object one insert of all
// its entries (at consecutive positions) and their marks, and one move of the head hint, so that
// a projected batch costs its objects, not its nodes. Entries whose position another writer
// took meanwhile are appended one at a time.
func (s *Service) indexNodes(ctx context.Context, nodes []*store.Node, participants [][]string) error {
	type pending struct {
		entries []store.MemoryEntry
		indexed [][]string
	}
	byObject := map[string]*pending{}
	var order []string
	for i, n := range nodes {
		e, indexed := memoryEntry(n)
		for j, obj := range participants[i] {
			if slices.Contains(participants[i][:j], obj) || !visibleTo(n, obj) {
				continue
			}
			p := byObject[obj]
			if p == nil {
				p = &pending{}
				byObject[obj] = p
				order = append(order, obj)
			}
			e.PeerID = peerOf(participants[i], obj)
			p.entries, p.indexed = append(p.entries, e), append(p.indexed, indexed)
		}
	}
	for _, obj := range order {
		if err := s.indexBatchFor(ctx, obj, byObject[obj].entries, byObject[obj].indexed); err != nil {
			return fmt.Errorf("index nodes: %w", err)
		}
	}
	return nil
}

// indexBatchFor appends entries to one object's index in one insert.
func (s *Service) indexBatchFor(ctx context.Context, objectID string, entries []store.MemoryEntry, indexed [][]string) error {
	if len(entries) == 1 {
		return s.indexFor(ctx, objectID, entries[0], indexed[0])
	}
	s.memory.init()
	last, ok := s.memory.heads.Get(objectID)
	if !ok {
		var err error
		if last, err = s.Store.MemoryHint(ctx, objectID); err != nil {
			return err
		}
	}
	var marks []string
	for i := range entries {
		marks = append(marks, s.newMarks(objectID, last+1+int64(i), indexed[i])...)
	}
	got, err := s.Store.InsertMemoryEntries(ctx, objectID, last+1, entries, marks)
	if err != nil {
		return err
	}
	for _, m := range marks {
		s.memory.marks.Add(m, struct{}{})
	}
	top := last
	for i, ok := range got {
		if ok {
			top = max(top, last+1+int64(i))
		}
	}
	s.memory.heads.Add(objectID, top)
	s.Store.AdvanceMemoryHead(ctx, objectID, top)
	for i, ok := range got {
		if !ok {
			if err := s.indexFor(ctx, objectID, entries[i], indexed[i]); err != nil {
				return err
			}
		}
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

// indexFor appends an entry to one object's index: it tries the position after the one it
// remembers (or the hint's), and the next one while another writer holds it.
func (s *Service) indexFor(ctx context.Context, objectID string, e store.MemoryEntry, indexed []string) error {
	s.memory.init()
	last, ok := s.memory.heads.Get(objectID)
	if !ok {
		var err error
		if last, err = s.Store.MemoryHint(ctx, objectID); err != nil {
			return err
		}
	}
	for seq := last + 1; ; seq++ {
		marks := s.newMarks(objectID, seq, indexed)
		got, err := s.Store.InsertMemoryEntry(ctx, objectID, seq, e, marks)
		if err != nil {
			return err
		}
		for _, m := range marks {
			s.memory.marks.Add(m, struct{}{}) // inserted now or there already
		}
		if got {
			s.memory.heads.Add(objectID, seq)
			s.Store.AdvanceMemoryHead(ctx, objectID, seq)
			return nil
		}
	}
}

// newMarks are the presence marks of an entry at seq that the process does not know to exist.
func (s *Service) newMarks(objectID string, seq int64, indexed []string) []string {
	var marks []string
	for _, st := range indexed {
		for level := 1; level <= store.MemoryLevels; level++ {
			id := store.PresenceID(objectID, level, seq>>(store.BlockBits*level), st)
			if !s.memory.marks.Contains(id) {
				marks = append(marks, id)
			}
		}
	}
	return marks
}

func peerOf(participants []string, obj string) string {
	for _, p := range participants {
		if p != obj {
			return p
		}
	}
	return ""
}
