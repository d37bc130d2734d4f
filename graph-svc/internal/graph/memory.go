package graph

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/kljensen/snowball/english"

	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/mongox"
)

// Bounds of the relationship-memory index and its search (docs/api.md names them).
const (
	// MaxIndexedTerms is how many distinct terms of a node are indexed: the first ones in its
	// title and body, so that a large ingested page costs a bounded number of appends.
	MaxIndexedTerms = 256
	// MaxQueryTerms is how many distinct terms of a query are searched.
	MaxQueryTerms = 8
	// MaxQueryBytes bounds q.
	MaxQueryBytes = 256
	// PostingsPerTerm is how many postings of each query term a search reads, newest first:
	// a search ranks at most MaxQueryTerms × PostingsPerTerm nodes, whatever the index holds.
	PostingsPerTerm = 200
	// MaxMemoryHits is the largest page of hits (10 when limit is absent).
	MaxMemoryHits = 50
	// bm25K1 and bm25B are BM25's usual parameters.
	bm25K1, bm25B = 1.2, 0.75
)

// terms splits text into lower-case words and stems them (Snowball English), dropping stop
// words; it returns each distinct stem with its count, in order of first occurrence, and the
// text's length in words.
func terms(text string) (order []string, tf map[string]int, length int) {
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

// indexNode adds a node to the memory index of each participant who may see it (the other
// side never gets an owner_only node). Guidance is not a node and is never indexed.
func (s *Service) indexNode(ctx context.Context, n *store.Node, participants []string) error {
	order, tf, length := terms(n.Title + "\n" + n.Body)
	if len(order) > MaxIndexedTerms {
		order = order[:MaxIndexedTerms]
	}
	for _, obj := range participants {
		if !visibleTo(n, obj) {
			continue
		}
		p := store.Posting{NodeID: n.ID, ThreadID: n.ThreadID, Type: n.Type, PeerID: peerOf(participants, obj),
			AuthorID: n.AuthorID, Len: length, CreatedAt: n.CreatedAt, ValidFrom: n.ValidFrom, ValidUntil: n.ValidUntil,
			MessageID: n.MessageID, SourceID: n.SourceID}
		for _, t := range order {
			p.TF = tf[t]
			if err := s.Store.AppendPosting(ctx, obj, t, p); err != nil {
				return err
			}
		}
		if err := s.Store.AppendMemoryDoc(ctx, obj, n.ID, length); err != nil {
			return err
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

func peerOf(participants []string, obj string) string {
	for _, p := range participants {
		if p != obj {
			return p
		}
	}
	return ""
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

type candidate struct {
	p     store.Posting
	score float64
}

// SearchMemory ranks the nodes of the caller's threads by BM25 over the stemmed terms of q.
// It reads, per query term, the term's length and its newest PostingsPerTerm postings; the
// candidates are filtered on what postings carry, ranked, and then read one validity fact
// each, best first, until the page is full.
func (s *Service) SearchMemory(ctx context.Context, c Caller, q MemoryQuery) (*MemoryResult, error) {
	if strings.TrimSpace(q.Q) == "" {
		return nil, httpx.BadRequest(httpx.CodeInvalidRequest, "q must not be empty")
	}
	if len(q.Q) > MaxQueryBytes {
		return nil, httpx.BadRequest(httpx.CodeInvalidRequest, "q is longer than %d bytes", MaxQueryBytes)
	}
	for _, t := range q.Types {
		if !slices.Contains(NodeTypes, t) {
			return nil, httpx.BadRequest(httpx.CodeInvalidKind, "types must be among %s", strings.Join(NodeTypes, ", "))
		}
	}
	qt, _, _ := terms(q.Q)
	if len(qt) > MaxQueryTerms {
		qt = qt[:MaxQueryTerms]
	}
	res := &MemoryResult{Query: q.Q, Terms: qt, Hits: []MemoryHit{}}
	if len(qt) == 0 {
		return res, nil
	}
	docs, total, err := s.Store.MemoryStats(ctx, c.ObjectID)
	if err != nil || docs == 0 {
		return res, err
	}
	avg := float64(total) / float64(docs)
	if avg <= 0 {
		avg = 1
	}
	hashes := map[string]string{}
	hashOf := func(id string) (string, error) {
		if h, ok := hashes[id]; ok {
			return h, nil
		}
		h, err := s.Store.Hash(ctx, id)
		hashes[id] = h
		return h, err
	}
	cands := map[string]*candidate{}
	for _, t := range qt {
		df, err := s.Store.TermCount(ctx, c.ObjectID, t)
		if err != nil {
			return nil, err
		}
		if df == 0 {
			continue
		}
		idf := math.Log(1 + (float64(docs)-float64(df)+0.5)/(float64(df)+0.5))
		ps, err := s.Store.Postings(ctx, c.ObjectID, t, PostingsPerTerm)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{} // a node appended twice (a crash, a redelivery) counts once
		for _, e := range ps {
			p := e.Value
			if seen[p.NodeID] {
				continue
			}
			seen[p.NodeID] = true
			ok, err := s.keep(p, q, hashOf)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			tf := float64(p.TF)
			sc := idf * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(p.Len)/avg))
			if cd := cands[p.NodeID]; cd != nil {
				cd.score += sc
			} else {
				cands[p.NodeID] = &candidate{p: p, score: sc}
			}
		}
	}
	ranked := make([]*candidate, 0, len(cands))
	for _, cd := range cands {
		ranked = append(ranked, cd)
	}
	slices.SortFunc(ranked, func(a, b *candidate) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		if c := b.p.CreatedAt.Compare(a.p.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.p.NodeID, b.p.NodeID)
	})
	kept := 0
	for _, cd := range ranked {
		inv, err := s.Store.Invalidation(ctx, cd.p.NodeID)
		if err != nil {
			return nil, err
		}
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
		h, err := s.hit(cd, inv, hashOf)
		if err != nil {
			return nil, err
		}
		res.Hits = append(res.Hits, h)
	}
	return res, nil
}

// keep applies the filters a posting carries what they need for.
func (s *Service) keep(p store.Posting, q MemoryQuery, hashOf func(string) (string, error)) (bool, error) {
	if len(q.Types) > 0 && !slices.Contains(q.Types, p.Type) {
		return false, nil
	}
	if q.Since != nil && p.CreatedAt.Before(*q.Since) || q.Until != nil && !p.CreatedAt.Before(*q.Until) {
		return false, nil
	}
	if q.AsOf != nil && p.CreatedAt.After(*q.AsOf) {
		return false, nil
	}
	if q.ValidAt != nil && (p.ValidFrom != nil && p.ValidFrom.After(*q.ValidAt) || p.ValidUntil != nil && !p.ValidUntil.After(*q.ValidAt)) {
		return false, nil
	}
	if q.PeerHash != "" {
		if p.PeerID == "" {
			return false, nil
		}
		h, err := hashOf(p.PeerID)
		if err != nil || h != q.PeerHash {
			return false, err
		}
	}
	return true, nil
}

func (s *Service) hit(cd *candidate, inv *store.Invalidation, hashOf func(string) (string, error)) (MemoryHit, error) {
	p := cd.p
	author, err := hashOf(p.AuthorID)
	if err != nil {
		return MemoryHit{}, err
	}
	h := MemoryHit{NodeID: p.NodeID, ThreadID: p.ThreadID, AuthorHash: author, Type: p.Type,
		CreatedAt: clock.Format(p.CreatedAt), ValidFrom: clock.FormatPtr(p.ValidFrom), ValidUntil: clock.FormatPtr(p.ValidUntil),
		Provenance: Prov{MessageID: optional(p.MessageID), SourceID: optional(p.SourceID)},
		Score:      math.Round(cd.score*1e4) / 1e4}
	if p.PeerID != "" {
		peer, err := hashOf(p.PeerID)
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
