package graph

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/mongox"
)

// Bounds of a memory search (docs/api.md names them).
const (
	// MaxQueryTerms is how many distinct stems of a query are searched.
	MaxQueryTerms = 8
	// MaxQueryBytes bounds q.
	MaxQueryBytes = 256
	// MaxMemoryHits is the largest page of hits (10 when limit is absent).
	MaxMemoryHits = 50
	// MaxBlocksPerTerm bounds the level-1 blocks (of store.BlockSize entries) a search reads per
	// query term, newest first: a search reads at most MaxQueryTerms × MaxBlocksPerTerm ×
	// store.BlockSize entries (4,096), whatever the index holds: the memory a search holds is
	// bounded too.
	MaxBlocksPerTerm = 16
	// memoryReaders bounds the point reads one search sends at once: a block's children or
	// entries in one round.
	memoryReaders = 16
	// bm25K1 and bm25B are BM25's usual parameters.
	bm25K1, bm25B = 1.2, 0.75
)

// MemoryQuery is a search of an object's relationship memory.
type MemoryQuery struct {
	Q     string
	Types []string
	// PeerHash keeps the nodes of threads with that object (its current hash).
	PeerHash string
	// Since and Until bound the creation time (system time).
	Since, Until *time.Time
	// AsOf reads memory as it stood then (system time): nodes created by then, each superseded
	// only if it was by then.
	AsOf *time.Time
	// ValidAt keeps the nodes whose world time (valid_from, valid_until) holds then.
	ValidAt           *time.Time
	IncludeSuperseded bool
	Offset, Limit     int
}

// MemoryHit is a node a search found.
type MemoryHit struct {
	NodeID       string  `json:"node_id"`
	ThreadID     string  `json:"thread_id"`
	PeerHash     *string `json:"peer_hash"`
	AuthorHash   string  `json:"author_hash"`
	Type         string  `json:"type"`
	Title        *string `json:"title"`
	Excerpt      string  `json:"excerpt"`
	CreatedAt    string  `json:"created_at"`
	ValidFrom    *string `json:"valid_from"`
	ValidUntil   *string `json:"valid_until"`
	SupersededAt *string `json:"superseded_at"`
	SupersededBy *string `json:"superseded_by"`
	Provenance   Prov    `json:"provenance"`
	Score        float64 `json:"score"`
}

// Prov is where a hit came from: the message or the tracked source (both nil for a node written
// through the graph routes).
type Prov struct {
	MessageID *string `json:"message_id"`
	SourceID  *string `json:"source_id"`
}

// MemoryResult is a page of hits, best first.
type MemoryResult struct {
	Query      string      `json:"q"`
	Terms      []string    `json:"terms"`
	Hits       []MemoryHit `json:"hits"`
	NextOffset int         `json:"-"`
}

// SearchMemory ranks the nodes of the caller's threads by BM25 over the stemmed terms of q.
//
// Per query term it walks the presence marks newest first down to the level-1 blocks that hold
// the term and reads their entries, until it has found 2 × (offset + limit) entries holding the
// term (at least 20) or read MaxBlocksPerTerm blocks. The entries read are the candidates:
// filtered on what entries carry, ranked, and then read one validity fact each, best first,
// until the page is full. The cost follows the hits asked for, not what the index holds (the
// walk's depth grows by one level per 16 times more entries).
func (s *Service) SearchMemory(ctx context.Context, c *contract.Principal, q MemoryQuery) (*MemoryResult, error) {
	qt, err := q.validate()
	if err != nil {
		return nil, err
	}
	res := &MemoryResult{Query: q.Q, Terms: qt, Hits: []MemoryHit{}}
	if len(qt) == 0 {
		return res, nil
	}
	head, err := s.Store.MemoryHead(ctx, c.ObjectID)
	if err != nil || head == 0 {
		return res, err
	}
	r := &memoryRead{s: s.Store, objectID: c.ObjectID, head: head, entries: map[int64]*store.MemoryEntry{}}
	want := max(20, 2*(q.Offset+q.Limit))
	idf := make(map[string]float64, len(qt))
	for _, t := range qt {
		df, err := r.walk(ctx, t, want)
		if err != nil {
			return nil, err
		}
		if df > 0 {
			idf[t] = math.Log(1 + (float64(head)-df+0.5)/(df+0.5))
		}
	}
	hashOf := s.hashCache(ctx)
	ranked, err := r.rank(q, idf, hashOf)
	if err != nil {
		return nil, err
	}
	return s.page(ctx, res, ranked, q, hashOf)
}

// validate checks a query and returns its stems (at most MaxQueryTerms).
func (q MemoryQuery) validate() ([]string, error) {
	if strings.TrimSpace(q.Q) == "" {
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "q must not be empty")
	}
	if len(q.Q) > MaxQueryBytes {
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "q is longer than %d bytes", MaxQueryBytes)
	}
	for _, t := range q.Types {
		if !slices.Contains(NodeTypes, t) {
			return nil, apierr.BadRequest(apierr.CodeInvalidKind, "types must be among %s", strings.Join(NodeTypes, ", "))
		}
	}
	if q.Limit < 1 || q.Limit > MaxMemoryHits {
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "limit must be an integer from 1 to %d", MaxMemoryHits)
	}
	qt, _, _ := analyze(q.Q)
	return qt[:min(len(qt), MaxQueryTerms)], nil
}

// memoryRead is one search's reads of an object's index.
type memoryRead struct {
	s        *store.Store
	objectID string
	head     int64
	mu       sync.Mutex
	entries  map[int64]*store.MemoryEntry // read entries by position (nil: none there)
}

// walk reads, newest first, the level-1 blocks holding stem until want entries hold it or
// MaxBlocksPerTerm blocks are read, and returns the stem's estimated document frequency: the
// entries found, scaled by the share of the index the walk covered when it stopped early.
func (r *memoryRead) walk(ctx context.Context, stem string, want int) (float64, error) {
	found, blocks := 0, 0
	lowest := r.head
	var visit func(level int, ids []int64) (bool, error)
	visit = func(level int, ids []int64) (bool, error) {
		present, err := r.probe(ctx, stem, level, ids)
		if err != nil {
			return false, err
		}
		for i, b := range ids {
			if !present[i] {
				continue
			}
			if level > 1 {
				if stop, err := visit(level-1, r.children(b, level-1)); stop || err != nil {
					return stop, err
				}
				continue
			}
			n, err := r.readBlock(ctx, b, stem)
			if err != nil {
				return false, err
			}
			found, blocks, lowest = found+n, blocks+1, b<<store.BlockBits
			if found >= want || blocks >= MaxBlocksPerTerm {
				return true, nil
			}
		}
		return false, nil
	}
	top := r.head >> (store.BlockBits * store.MemoryLevels)
	roots := make([]int64, 0, top+1)
	for b := top; b >= 0; b-- {
		roots = append(roots, b)
	}
	stopped, err := visit(store.MemoryLevels, roots)
	if err != nil || !stopped || found == 0 {
		return float64(found), err
	}
	covered := max(r.head-lowest+1, 1)
	return float64(found) * float64(r.head) / float64(covered), nil
}

// children are the blocks of level under block b (of level+1) that may hold entries, newest
// first.
func (r *memoryRead) children(b int64, level int) []int64 {
	newest := min(b<<store.BlockBits+store.BlockSize-1, r.head>>(store.BlockBits*level))
	ids := make([]int64, 0, store.BlockSize)
	for c := newest; c >= b<<store.BlockBits; c-- {
		ids = append(ids, c)
	}
	return ids
}

// probe reads whether stem's presence mark exists for each block of level (point reads, a few
// at once).
func (r *memoryRead) probe(ctx context.Context, stem string, level int, ids []int64) ([]bool, error) {
	present := make([]bool, len(ids))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(memoryReaders)
	for i, b := range ids {
		g.Go(func() error {
			var err error
			present[i], err = r.s.HasPresence(gctx, store.PresenceID(r.objectID, level, b, stem))
			return err
		})
	}
	return present, g.Wait()
}

// readBlock reads the entries of a level-1 block this search has not read yet and counts those
// holding stem.
func (r *memoryRead) readBlock(ctx context.Context, b int64, stem string) (int, error) {
	first := max(b<<store.BlockBits, 1)
	last := min(b<<store.BlockBits+store.BlockSize-1, r.head)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(memoryReaders)
	for seq := first; seq <= last; seq++ {
		r.mu.Lock()
		_, done := r.entries[seq]
		r.mu.Unlock()
		if done {
			continue
		}
		g.Go(func() error {
			e, err := r.s.MemoryEntryAt(gctx, r.objectID, seq)
			if err != nil && !errors.Is(err, mongox.ErrNotFound) {
				return err
			}
			r.mu.Lock()
			r.entries[seq] = e // nil: a position a writer claimed and has not filled, or never will
			r.mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	n := 0
	for seq := first; seq <= last; seq++ {
		if e := r.entries[seq]; e != nil && slices.Contains(e.Stems, stem) {
			n++
		}
	}
	return n, nil
}

// candidate is an entry a search ranks.
type candidate struct {
	e     *store.MemoryEntry
	score float64
}

// rank scores the entries read that hold a query term and pass the filters, best first. A
// node indexed twice for the object (a crash between its writes) counts once.
func (r *memoryRead) rank(q MemoryQuery, idf map[string]float64, hashOf func(string) (string, error)) ([]candidate, error) {
	total, count := 0, 0
	for _, e := range r.entries {
		if e != nil {
			total, count = total+e.Len, count+1
		}
	}
	avg := max(float64(total)/float64(max(count, 1)), 1)
	seen := map[string]bool{}
	var out []candidate
	for _, e := range r.entries {
		if e == nil || seen[e.NodeID] {
			continue
		}
		score := 0.0
		for i, st := range e.Stems {
			w, ok := idf[st]
			if !ok {
				continue
			}
			tf := float64(e.Counts[i])
			score += w * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(e.Len)/avg))
		}
		if score == 0 {
			continue
		}
		ok, err := keep(e, q, hashOf)
		if err != nil {
			return nil, err
		}
		if ok {
			seen[e.NodeID] = true
			out = append(out, candidate{e: e, score: score})
		}
	}
	slices.SortFunc(out, func(a, b candidate) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		if c := b.e.CreatedAt.Compare(a.e.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.e.NodeID, b.e.NodeID)
	})
	return out, nil
}

// keep applies the filters an entry carries what they need for.
func keep(e *store.MemoryEntry, q MemoryQuery, hashOf func(string) (string, error)) (bool, error) {
	if len(q.Types) > 0 && !slices.Contains(q.Types, e.Type) {
		return false, nil
	}
	if q.Since != nil && e.CreatedAt.Before(*q.Since) || q.Until != nil && !e.CreatedAt.Before(*q.Until) {
		return false, nil
	}
	if q.AsOf != nil && e.CreatedAt.After(*q.AsOf) {
		return false, nil
	}
	if q.ValidAt != nil && (e.ValidFrom != nil && e.ValidFrom.After(*q.ValidAt) || e.ValidUntil != nil && !e.ValidUntil.After(*q.ValidAt)) {
		return false, nil
	}
	if q.PeerHash != "" {
		if e.PeerID == "" {
			return false, nil
		}
		h, err := hashOf(e.PeerID)
		if err != nil || h != q.PeerHash {
			return false, err
		}
	}
	return true, nil
}

// page reads the validity facts of the ranked candidates, best first and memoryReaders at once,
// until the page is full.
func (s *Service) page(ctx context.Context, res *MemoryResult, ranked []candidate, q MemoryQuery, hashOf func(string) (string, error)) (*MemoryResult, error) {
	kept := 0
	var invs map[string]*store.Invalidation
	for i, cd := range ranked {
		if i%memoryReaders == 0 {
			next := ranked[i:min(len(ranked), i+memoryReaders)]
			ns := make([]*store.Node, len(next))
			for j, c := range next {
				ns[j] = &store.Node{ID: c.e.NodeID}
			}
			var err error
			if invs, err = s.invalidations(ctx, ns); err != nil {
				return nil, err
			}
		}
		inv := invs[cd.e.NodeID]
		if inv != nil && q.AsOf != nil && inv.InvalidAt.After(*q.AsOf) {
			inv = nil // superseded after the time asked about: current then
		}
		if inv != nil && !q.IncludeSuperseded {
			continue
		}
		kept++
		if kept <= q.Offset {
			continue
		}
		if len(res.Hits) == q.Limit {
			res.NextOffset = q.Offset + q.Limit
			break
		}
		h, err := hit(cd, inv, hashOf)
		if err != nil {
			return nil, err
		}
		res.Hits = append(res.Hits, h)
	}
	return res, nil
}

// hashCache reads objects' current hashes, each once per search.
func (s *Service) hashCache(ctx context.Context) func(string) (string, error) {
	hashes := map[string]string{}
	return func(id string) (string, error) {
		if h, ok := hashes[id]; ok {
			return h, nil
		}
		h, err := s.Store.Hash(ctx, id)
		hashes[id] = h
		return h, err
	}
}

func hit(cd candidate, inv *store.Invalidation, hashOf func(string) (string, error)) (MemoryHit, error) {
	e := cd.e
	author, err := hashOf(e.AuthorID)
	if err != nil {
		return MemoryHit{}, err
	}
	h := MemoryHit{NodeID: e.NodeID, ThreadID: e.ThreadID, AuthorHash: author, Type: e.Type, Title: optional(e.Title),
		Excerpt: e.Excerpt, CreatedAt: clock.Format(e.CreatedAt), ValidFrom: clock.FormatPtr(e.ValidFrom),
		ValidUntil: clock.FormatPtr(e.ValidUntil),
		Provenance: Prov{MessageID: optional(e.MessageID), SourceID: optional(e.SourceID)},
		Score:      math.Round(cd.score*1e4) / 1e4}
	if e.PeerID != "" {
		peer, err := hashOf(e.PeerID)
		if err != nil {
			return MemoryHit{}, err
		}
		h.PeerHash = optional(peer)
	}
	if inv != nil {
		h.SupersededAt, h.SupersededBy = clock.FormatPtr(&inv.InvalidAt), &inv.By
	}
	return h, nil
}
