package graph

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
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
	// MaxPostingsPerTerm bounds the postings a search reads per query term, newest first: a
	// search reads at most MaxQueryTerms × MaxPostingsPerTerm postings (2,048), whatever the
	// index holds, so the memory a search holds is bounded too.
	MaxPostingsPerTerm = 256
	// bm25K1 and bm25B are BM25's usual parameters.
	bm25K1, bm25B = 1.2, 0.75
)

// MemoryStore is the relationship-memory index: its writes (indexNode) and a search's reads.
type MemoryStore interface {
	IndexMemory(ctx context.Context, objectID string, entries []store.MemoryEntry, indexed [][]string) error
	IndexMemories(ctx context.Context, batches []store.MemoryBatch) error
	Postings(ctx context.Context, r mongox.Range) ([]store.MemoryEntry, error)
	Cards(ctx context.Context, nodeIDs, objectIDs []string) (map[string]store.NodeCard, map[string]string, error)
}

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
// Per query term it reads ONE range of the caller's postings of that term, newest first (within
// the query's time bounds), of 2 × (offset + limit) postings (at least 20, at most
// MaxPostingsPerTerm), all terms at once. The postings read are the candidates: each carries
// what the filters need (its validity fact once superseded, the index's stats as they stood
// when it was written) and its term's count in the node. Then ONE find by _id (one per 1,000
// ids) reads the cards of the candidates that may be hits (what a hit shows, and the node's
// scored stems, on every one of which a candidate is scored, whichever term found it) and the
// current hashes of the objects the candidates name (cards): at most 2 commands per term,
// whatever the index holds.
func (s *Service) SearchMemory(ctx context.Context, c *contract.Principal, q MemoryQuery) (*MemoryResult, error) {
	qt, err := q.validate()
	if err != nil {
		return nil, err
	}
	res := &MemoryResult{Query: q.Q, Terms: qt, Hits: []MemoryHit{}}
	if len(qt) == 0 {
		return res, nil
	}
	want := min(MaxPostingsPerTerm, max(20, 2*(q.Offset+q.Limit)))
	lists := make([][]store.MemoryEntry, len(qt))
	g, gctx := errgroup.WithContext(ctx)
	for i, t := range qt {
		g.Go(func() (err error) {
			lists[i], err = s.Store.Postings(gctx, termRange(c.ObjectID, t, q, want))
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	cands := candidates(qt, lists)
	stats := statsOf(cands)
	n := max(float64(stats.Nodes), float64(len(cands)), 1)
	idf := make(map[string]float64, len(qt))
	for i, t := range qt {
		if df := docFrequency(lists[i], want, n, stats.First, q); df > 0 {
			idf[t] = math.Log(1 + (n-df+0.5)/(df+0.5))
		}
	}
	hashes, err := s.cards(ctx, c, cands, q, qt)
	if err != nil {
		return nil, err
	}
	return page(res, rank(cands, q, qt, idf, hashes), q, hashes), nil
}

// found is a node a search read postings of: the first posting read (what the filters and the
// hit read) and the counts in the node of the query's terms known so far.
type found struct {
	e *store.MemoryEntry
	// tf holds the count of each query term known for the node: those of the postings read
	// (a posting's own term), or of every term once the node's scored stems are known (a
	// posting of an earlier release carries them; scoredStems reads the others').
	tf map[string]int
	// scored says that tf holds every query term (a term missing is not among the node's
	// scored stems).
	scored bool
}

// candidates are the nodes of the postings read for each term (lists[i] for qt[i]), by id.
func candidates(qt []string, lists [][]store.MemoryEntry) map[string]*found {
	out := map[string]*found{}
	for i, l := range lists {
		for j := range l {
			e := &l[j]
			f := out[e.NodeID]
			if f == nil {
				f = &found{e: e, tf: map[string]int{}}
				out[e.NodeID] = f
			}
			if f.scored {
				continue
			}
			if len(e.Stems) > 0 { // a posting of an earlier release: the node's stems with it
				f.setScored(qt, e.Stems, e.Counts)
				continue
			}
			f.tf[qt[i]] = e.Count
		}
	}
	return out
}

// setScored sets the counts of the query's terms from the node's scored stems.
func (f *found) setScored(qt, stems []string, counts []int) {
	for i, st := range stems {
		if i < len(counts) && slices.Contains(qt, st) {
			f.tf[st] = counts[i]
		}
	}
	f.scored = true
}

// cards reads, in one find (Cards), the cards of the candidates that may be hits and the current
// hashes of the objects every candidate names (authors and peers; the caller's is the one it
// called with). A card gives its candidate the count of every query term among the node's
// scored stems, and what the hit shows when the posting (of a release that wrote no cards)
// does not carry it. A candidate that may be a hit but has no card yet (its postings were
// inserted, its card not) is left out, as not indexed yet.
func (s *Service) cards(ctx context.Context, c *contract.Principal, cands map[string]*found, q MemoryQuery, qt []string) (map[string]string, error) {
	var nodes, objects []string
	named := map[string]bool{c.ObjectID: true}
	for id, f := range cands {
		for _, o := range []string{f.e.AuthorID, f.e.PeerID} {
			if o != "" && !named[o] {
				named[o] = true
				objects = append(objects, o)
			}
		}
		if mayBeHit(f.e, q) {
			nodes = append(nodes, id)
		}
	}
	cards, known, err := s.Store.Cards(ctx, nodes, objects)
	if err != nil {
		return nil, err
	}
	for _, id := range nodes {
		f, card := cands[id], cards[id]
		if f.e.ThreadID == "" {
			if card.ThreadID == "" {
				delete(cands, id)
				continue
			}
			f.e.ThreadID, f.e.Title, f.e.Excerpt, f.e.MessageID, f.e.SourceID = card.ThreadID, card.Title, card.Excerpt, card.MessageID, card.SourceID
		}
		if !f.scored && len(card.Stems) > 0 {
			f.setScored(qt, card.Stems, card.Counts)
		}
	}
	known[c.ObjectID] = c.Hash
	return known, nil
}

// statsOf is what the postings read say of the index's stats: the most nodes any of them saw
// written (the newest of them, which every term's range reads first) and the first node's
// time. Postings of an earlier release (before UpgradePostings ran) carry none: their count is
// then the candidates'.
func statsOf(cands map[string]*found) store.MemoryStats {
	var st store.MemoryStats
	for _, f := range cands {
		e := f.e
		st.Nodes = max(st.Nodes, e.Nodes)
		if e.First != nil && !e.First.IsZero() && (st.First.IsZero() || e.First.Before(st.First)) {
			st.First = *e.First
		}
	}
	return st
}

// termRange is the range of an object's postings of stem that a query reads: newest first, at
// most want, within the query's bounds on creation time (since, until and as_of; the filters
// check them exactly, the range only keeps the read to them).
func termRange(objectID, stem string, q MemoryQuery, want int) mongox.Range {
	scope := store.PostingScope(objectID, stem)
	r := mongox.Range{Scope: scope, Desc: true, Limit: want}
	var hi *time.Time
	for _, t := range []*time.Time{q.Until, q.AsOf} {
		if t != nil && (hi == nil || t.Before(*hi)) {
			hi = t
		}
	}
	if hi != nil {
		r.Before = scope + mongox.Time(hi.Add(time.Microsecond))
	}
	if q.Since != nil {
		r.After = mongox.ScopeEnd(scope + mongox.Time(q.Since.Add(-time.Microsecond)) + mongox.Sep)
	}
	return r
}

// docFrequency is a term's document frequency in an index of n nodes: the postings read when
// the range held fewer than want, else those scaled by the share of the index's time the read
// covered (postings are spread over time as the nodes were made).
func docFrequency(found []store.MemoryEntry, want int, n float64, first time.Time, q MemoryQuery) float64 {
	df := float64(len(found))
	if len(found) < want || first.IsZero() {
		return df
	}
	newest := clock.Now()
	if q.AsOf != nil && q.AsOf.Before(newest) {
		newest = *q.AsOf
	}
	oldest := found[len(found)-1].CreatedAt
	covered := max(newest.Sub(oldest), time.Microsecond)
	whole := max(newest.Sub(first), covered)
	return min(df*float64(whole)/float64(covered), n)
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
	if qt == nil {
		qt = []string{} // a query of stop words only: no terms, an empty list
	}
	return qt[:min(len(qt), MaxQueryTerms)], nil
}

// candidate is an entry a search ranks.
type candidate struct {
	e     *store.MemoryEntry
	score float64
}

// rank scores the candidates that pass the filters, best first, on the query's terms (qt) in
// their order, so that a score is the same sum whichever way its counts were read.
func rank(cands map[string]*found, q MemoryQuery, qt []string, idf map[string]float64, hashes map[string]string) []candidate {
	total := 0
	for _, f := range cands {
		total += f.e.Len
	}
	avg := max(float64(total)/float64(max(len(cands), 1)), 1)
	var out []candidate
	for _, f := range cands {
		e := f.e
		score := 0.0
		for _, st := range qt {
			w, ok := idf[st]
			if !ok || f.tf[st] == 0 {
				continue
			}
			tf := float64(f.tf[st])
			score += w * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(e.Len)/avg))
		}
		if score != 0 && keep(e, q, hashes) {
			out = append(out, candidate{e: e, score: score})
		}
	}
	slices.SortFunc(out, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(b.score, a.score), b.e.CreatedAt.Compare(a.e.CreatedAt), strings.Compare(a.e.NodeID, b.e.NodeID))
	})
	return out
}

// mayBeHit tells whether an entry passes the filters it carries what they need for without the
// hashes (all but the peer's), and is not one a page leaves out as superseded.
func mayBeHit(e *store.MemoryEntry, q MemoryQuery) bool {
	return keep(e, q, nil) && (q.IncludeSuperseded || superseded(e, q) == nil)
}

// superseded is when a decision superseded the entry, nil when it had not by the query's as_of.
func superseded(e *store.MemoryEntry, q MemoryQuery) *time.Time {
	if at := e.SupersededAt; at != nil && (q.AsOf == nil || !at.After(*q.AsOf)) {
		return at
	}
	return nil
}

// keep applies the filters an entry carries what they need for (all but the peer's when hashes
// is nil).
func keep(e *store.MemoryEntry, q MemoryQuery, hashes map[string]string) bool {
	if len(q.Types) > 0 && !slices.Contains(q.Types, e.Type) {
		return false
	}
	if q.Since != nil && e.CreatedAt.Before(*q.Since) || q.Until != nil && !e.CreatedAt.Before(*q.Until) {
		return false
	}
	if q.AsOf != nil && e.CreatedAt.After(*q.AsOf) {
		return false
	}
	if q.ValidAt != nil && (e.ValidFrom != nil && e.ValidFrom.After(*q.ValidAt) || e.ValidUntil != nil && !e.ValidUntil.After(*q.ValidAt)) {
		return false
	}
	return q.PeerHash == "" || hashes == nil || e.PeerID != "" && hashes[e.PeerID] == q.PeerHash
}

// page skips the candidates superseded (unless asked for, or superseded after as_of) up to the
// offset and keeps a page of the rest, best first.
func page(res *MemoryResult, ranked []candidate, q MemoryQuery, hashes map[string]string) *MemoryResult {
	kept := 0
	for _, cd := range ranked {
		at := superseded(cd.e, q)
		if at != nil && !q.IncludeSuperseded {
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
		res.Hits = append(res.Hits, hit(cd, at, hashes))
	}
	return res
}

func hit(cd candidate, superseded *time.Time, hashes map[string]string) MemoryHit {
	e := cd.e
	h := MemoryHit{NodeID: e.NodeID, ThreadID: e.ThreadID, AuthorHash: hashes[e.AuthorID], Type: e.Type, Title: contract.Optional(e.Title),
		Excerpt: e.Excerpt, CreatedAt: clock.Format(e.CreatedAt), ValidFrom: clock.FormatPtr(e.ValidFrom),
		ValidUntil: clock.FormatPtr(e.ValidUntil),
		Provenance: Prov{MessageID: contract.Optional(e.MessageID), SourceID: contract.Optional(e.SourceID)},
		Score:      math.Round(cd.score*1e4) / 1e4}
	if e.PeerID != "" {
		h.PeerHash = contract.Optional(hashes[e.PeerID])
	}
	if superseded != nil {
		h.SupersededAt, h.SupersededBy = clock.FormatPtr(superseded), &e.SupersededBy
	}
	return h
}
