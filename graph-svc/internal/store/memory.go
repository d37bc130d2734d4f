package store

import (
	"context"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"golang.org/x/sync/errgroup"

	"github.com/svcdev/svc/pkg/mongox"
)

// MemoryPostings is the collection of the relationship-memory index (docs/architecture.md,
// "Memory search"). Its documents are keyed by the data a search reads them in:
//
//   - "p|<object>|<stem>|<created>|<node>": a posting, that node (one the object may see) holds
//     stem among its indexed stems, packed in one field (packedPosting). It carries what a
//     search filters and ranks on for its stem (the node's type, peer, author and times, the
//     stem's count in the node, the node's length, the index's stats as they stood when it was
//     written, and the node's validity fact once a decision supersedes it), so that a query
//     term is ONE range read, newest first, bounded by a limit.
//   - "s|<node>": the node's card (nodeCard): its scored stems and their counts, and what a hit
//     shows of it (thread, title, excerpt, provenance), once per node whatever the indexes and
//     postings that name it. A search reads those of the candidates that may be hits, in one
//     find with the hashes below (Cards).
//   - "h|<object>": a copy of the object's current hash (hashCopy), kept beside the Hashes
//     projection so that that one find reads the hashes a search's hits name too.
//   - "n|<object>": how many nodes the object's index holds and when its first was made, for
//     BM25's idf. It is moved by $inc from whichever writer indexes a node, so on FerretDB (whose
//     updates are read-then-write) concurrent writers may lose an increment: the count only
//     weighs query terms against each other, never decides what is found.
//   - "u|postings": that UpgradePostings carried the postings of the previous layout over;
//     "u|hashes": that UpgradeHashCopies copied the Hashes projection.
//
// Every posting and card is inserted once, keyed by its node: a redelivered event inserts
// nothing new. A posting changes once afterwards, when its node is superseded
// (SupersedePostings). Postings of earlier releases carry the node's scored stems themselves
// (as the string "sc", or the arrays "st" and "tf"), and what a hit shows, and are read as they
// are.
const MemoryPostings = "memory_postings"

// MemoryIndex is the collection of the index of earlier releases (positions and presence marks),
// read once by UpgradeMemory and then dropped.
const MemoryIndex = "memory_index"

// MemoryEntry is one node as the index of one object holds it.
type MemoryEntry struct {
	NodeID     string     `bson:"n"`
	ThreadID   string     `bson:"t,omitempty"`
	Type       string     `bson:"ty"`
	PeerID     string     `bson:"p,omitempty"`
	AuthorID   string     `bson:"a"`
	CreatedAt  time.Time  `bson:"c"`
	ValidFrom  *time.Time `bson:"vf,omitempty"`
	ValidUntil *time.Time `bson:"vu,omitempty"`
	MessageID  string     `bson:"m,omitempty"`
	SourceID   string     `bson:"s,omitempty"`
	// Title and Excerpt (the body's start, bounded) let a hit say what it is without a read of
	// the node. They, ThreadID, MessageID and SourceID are stored in the node's card, not in its
	// postings (nodeCard); postings of earlier releases carry them.
	Title   string `bson:"ti,omitempty"`
	Excerpt string `bson:"x,omitempty"`
	// Len is the node's length in stems (BM25's document length).
	Len int `bson:"dl"`
	// Stems and Counts are the node's most frequent stems (at most graph.MaxScoredStems), its
	// indexed stems first, and how often each occurs: a search scores the node on every query
	// term among them, whichever term found it. IndexMemory stores them once per node (the
	// "s|<node>" document), not in the postings; a posting read back carries them only when an
	// earlier release wrote it (as one string, postingDoc.Scored, or as these two arrays).
	Stems  []string `bson:"st,omitempty"`
	Counts []int    `bson:"tf,omitempty"`
	// Count is how often the posting's own stem occurs in the node: what a search of that stem
	// alone ranks on. Postings of earlier releases have none (0) and carry Stems instead.
	Count int `bson:"f,omitempty"`
	// Nodes and First are the object's index stats (MemoryStats) as IndexMemory moved them when
	// it wrote the posting: a search takes BM25's idf from the newest postings it reads instead
	// of reading the stats apart.
	Nodes int64      `bson:"nd,omitempty"`
	First *time.Time `bson:"fi,omitempty"`
	// SupersededAt and SupersededBy copy the node's validity fact (node_validity) once a
	// decision superseded it, so that a search filters and shows superseded nodes without
	// reading the facts.
	SupersededAt *time.Time `bson:"ia,omitempty"`
	SupersededBy string     `bson:"ib,omitempty"`
}

type postingDoc struct {
	ID          string `bson:"_id"`
	MemoryEntry `bson:",inline"`
	// Scored is the entry's Stems and Counts as "<stem>:<count>" separated by spaces (stems are
	// letters and digits only), as postings of earlier releases carry them: every posting of a
	// node repeated them, most of the bytes a projected message wrote. Postings are written
	// without them now (the node's "s|<node>" document holds them once).
	Scored string `bson:"sc,omitempty"`
}

// postingFields is postingDoc as the driver stores it, without postingDoc's BSON methods.
type postingFields postingDoc

// packedPosting is a posting as it is written: its _id and its entry as one BSON document,
// stored as binary. A message writes about 64 postings, most of what its projection costs, and
// the embedded store's cost of a document grows with its fields (FerretDB keeps each field's
// type beside the document's JSON and converts field by field): one field instead of thirteen
// takes about a sixth off the projection's CPU (BenchmarkMessageIndexBytes in
// graph-svc/internal/graph). Nothing filters on a posting's fields, on any store: a search reads
// a range of _ids and decodes what it read. SupersedePostings sets SupersededAt and SupersededBy
// beside Entry later, and they win over any packed.
type packedPosting struct {
	ID    string `bson:"_id"`
	Entry []byte `bson:"e"`
}

// MarshalBSON stores the posting packed (packedPosting), without what its node's card holds
// (nodeCard): the node's stems and counts (see Scored) and what a hit shows of it.
func (d postingDoc) MarshalBSON() ([]byte, error) {
	e := d.MemoryEntry
	e.Stems, e.Counts = nil, nil
	e.ThreadID, e.Title, e.Excerpt, e.MessageID, e.SourceID = "", "", "", "", ""
	entry, err := bson.Marshal(e)
	if err != nil {
		return nil, err
	}
	return bson.Marshal(packedPosting{ID: d.ID, Entry: entry})
}

// UnmarshalBSON reads a posting of any release: packed (packedPosting), or with its entry's
// fields beside its _id and, in earlier releases, the node's stems and counts as Scored or as
// the two arrays.
func (d *postingDoc) UnmarshalBSON(b []byte) error {
	var f postingFields
	if err := bson.Unmarshal(b, &f); err != nil {
		return err
	}
	if v, err := bson.Raw(b).LookupErr("e"); err == nil {
		_, packed, ok := v.BinaryOK()
		if !ok {
			return fmt.Errorf("posting %s: its entry is %s, not binary", f.ID, v.Type)
		}
		var e MemoryEntry
		if err := bson.Unmarshal(packed, &e); err != nil {
			return fmt.Errorf("posting %s: %w", f.ID, err)
		}
		if f.SupersededAt != nil {
			e.SupersededAt, e.SupersededBy = f.SupersededAt, f.SupersededBy
		}
		f.MemoryEntry = e
	}
	if f.Scored != "" {
		f.Stems, f.Counts = unpackScored(f.Scored)
		f.Scored = ""
	}
	*d = postingDoc(f)
	return nil
}

// nodeCard is what a search reads of a node besides its postings, once per node ("s|<node>"):
// its scored stems and their counts, packed as postingDoc.Scored, and what a hit shows of it.
// Cards of earlier releases hold the stems only: their postings carry the rest.
type nodeCard struct {
	ID        string `bson:"_id"`
	Scored    string `bson:"sc"`
	ThreadID  string `bson:"t,omitempty"`
	Title     string `bson:"ti,omitempty"`
	Excerpt   string `bson:"x,omitempty"`
	MessageID string `bson:"m,omitempty"`
	SourceID  string `bson:"s,omitempty"`
	// Hash is set on the copies of object hashes that share the collection (hashCopy), so that
	// one find reads cards and hashes alike.
	Hash string `bson:"hash,omitempty"`
}

// NodeCard is a node's scored stems with how often each occurs in it (MemoryEntry.Stems and
// Counts), and what a hit shows of it (ThreadID empty for a node indexed by an earlier release,
// whose postings carry it).
type NodeCard struct {
	Stems                                         []string
	Counts                                        []int
	ThreadID, Title, Excerpt, MessageID, SourceID string
}

// packScored writes stems and their counts as "<stem>:<count> …".
func packScored(stems []string, counts []int) string {
	var b strings.Builder
	for i, st := range stems {
		if i > 0 {
			b.WriteByte(' ')
		}
		n := 0
		if i < len(counts) {
			n = counts[i]
		}
		b.WriteString(st)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(n))
	}
	return b.String()
}

// unpackScored reads what packScored wrote; a malformed count reads as 0.
func unpackScored(s string) ([]string, []int) {
	fields := strings.Fields(s)
	stems, counts := make([]string, len(fields)), make([]int, len(fields))
	for i, f := range fields {
		st, n, _ := strings.Cut(f, ":")
		stems[i] = st
		counts[i], _ = strconv.Atoi(n)
	}
	return stems, counts
}

func (d postingDoc) id() string { return d.ID }

// MemoryStats is what a search knows of an object's whole index.
type MemoryStats struct {
	ID    string    `bson:"_id"`
	Nodes int64     `bson:"nodes"`
	First time.Time `bson:"first"`
}

// keyText encodes text as a key part: as it is when it is one already (ids, ASCII stems), else
// "~" and its hex (a stem with letters beyond ASCII). No id or ASCII stem starts with "~".
func keyText(s string) string {
	if s != "" && mongox.KeyPart(s) && s[0] != '~' {
		return s
	}
	return "~" + hex.EncodeToString([]byte(s))
}

// PostingScope is the range of the postings of stem in an object's index.
func PostingScope(objectID, stem string) string {
	return mongox.Scope("p", keyText(objectID), keyText(stem))
}

// PostingID is the _id of a posting.
func PostingID(objectID, stem string, created time.Time, nodeID string) string {
	return PostingScope(objectID, stem) + mongox.Key(mongox.Time(created), keyText(nodeID))
}

func statsID(objectID string) string { return mongox.Key("n", keyText(objectID)) }

func scoredID(nodeID string) string { return mongox.Key("s", keyText(nodeID)) }

// countOf is how often stem occurs in the entry (0 when it is not among its scored stems).
func countOf(e MemoryEntry, stem string) int {
	if i := slices.Index(e.Stems, stem); i >= 0 && i < len(e.Counts) {
		return e.Counts[i]
	}
	return 0
}

// MemoryBatch is entries to add to one object's index: a posting per indexed stem of each
// (Indexed[i] for Entries[i]).
type MemoryBatch struct {
	ObjectID string
	Entries  []MemoryEntry
	Indexed  [][]string
}

// IndexMemory adds entries to an object's index: one read of the object's stats and one move of
// them by the entries (the result each posting carries), then for each entry a posting per indexed
// stem (indexed[i] for entries[i]) and its node's scored stems (entries[i].Stems and Counts), all
// in one unordered insert. It costs three commands whatever
// the entries hold; a redelivery, whose postings exist, takes its entries off the stats again (a
// fourth command).
func (s *Store) IndexMemory(ctx context.Context, objectID string, entries []MemoryEntry, indexed [][]string) error {
	return s.IndexMemories(ctx, []MemoryBatch{{ObjectID: objectID, Entries: entries, Indexed: indexed}})
}

// IndexMemories adds entries to the indexes of several objects as IndexMemory does: one read of
// every object's stats and one write moving them all (see moveStats), and the postings of them
// all with the scored stems of their nodes (once per node, however many objects index it) in one
// unordered insert, so that a batch costs three commands whatever number of objects and nodes
// it holds.
func (s *Store) IndexMemories(ctx context.Context, batches []MemoryBatch) error {
	type owner struct{ batch, entry int }
	moves := make([]statsMove, 0, len(batches))
	for _, mb := range batches {
		m := statsMove{objectID: mb.ObjectID}
		for i, e := range mb.Entries {
			if len(mb.Indexed[i]) == 0 {
				continue
			}
			m.nodes++
			if m.first.IsZero() || e.CreatedAt.Before(m.first) {
				m.first = e.CreatedAt
			}
		}
		moves = append(moves, m)
	}
	stats, err := s.moveStats(ctx, moves)
	if err != nil {
		return err
	}
	// The nodes' cards go first, so that a search that reads a posting finds its card.
	var docs []any
	scored := map[string]bool{}
	for _, mb := range batches {
		for i, e := range mb.Entries {
			if len(mb.Indexed[i]) > 0 && !scored[e.NodeID] {
				scored[e.NodeID] = true
				docs = append(docs, nodeCard{ID: scoredID(e.NodeID), Scored: packScored(e.Stems, e.Counts), ThreadID: e.ThreadID,
					Title: e.Title, Excerpt: e.Excerpt, MessageID: e.MessageID, SourceID: e.SourceID})
			}
		}
	}
	postingsFrom := len(docs)
	var owners []owner // docs[postingsFrom+i] belongs to batches[owners[i].batch].Entries[owners[i].entry]
	for b, mb := range batches {
		if moves[b].nodes == 0 {
			continue
		}
		st := stats[mb.ObjectID]
		for i, e := range mb.Entries {
			e.Nodes, e.First = st.Nodes, &st.First
			for _, stem := range mb.Indexed[i] {
				e.Count = countOf(e, stem)
				docs = append(docs, postingDoc{ID: PostingID(mb.ObjectID, stem, e.CreatedAt, e.NodeID), MemoryEntry: e})
				owners = append(owners, owner{b, i})
			}
		}
	}
	got, err := mongox.InsertNewInBatches(ctx, s.c(MemoryPostings), docs, memoryBatch)
	if err != nil {
		return fmt.Errorf("store memory postings: %w", err)
	}
	added := map[owner]bool{}
	for i, ok := range got[postingsFrom:] {
		if ok {
			added[owners[i]] = true
		}
	}
	addedIn := make([]int64, len(batches)) // entries of each batch with a posting added now
	for o := range added {
		addedIn[o.batch]++
	}
	// A redelivery, whose postings exist, takes its entries off the stats again: one write more.
	var back []statsMove
	for b, m := range moves {
		if again := m.nodes - addedIn[b]; again > 0 {
			back = append(back, statsMove{objectID: m.objectID, nodes: -again, first: m.first})
		}
	}
	return s.writeStats(ctx, back)
}

// statsMove moves an object's index stats by nodes made from first on.
type statsMove struct {
	objectID string
	nodes    int64
	first    time.Time
}

// moveStats applies moves (those of no node are left out) and returns the stats of their objects
// as they then are: one read of them all (per mongox.MaxIDIn objects), one write moving them all,
// and for objects whose stats do not exist yet (their first node) one insert before the write.
// The stats returned are those read plus the moves: a concurrent writer's move may be missing
// from them, as it may from the count itself (see MemoryPostings).
func (s *Store) moveStats(ctx context.Context, moves []statsMove) (map[string]MemoryStats, error) {
	var ids []string
	var moved []statsMove
	for _, m := range moves {
		if m.nodes != 0 {
			moved = append(moved, m)
			ids = append(ids, statsID(m.objectID))
		}
	}
	out := make(map[string]MemoryStats, len(moved))
	docs, err := mongox.FindIn[MemoryStats](ctx, s.c(MemoryPostings), ids)
	if err != nil {
		return nil, fmt.Errorf("store memory stats: %w", err)
	}
	byID := make(map[string]MemoryStats, len(docs))
	for _, d := range docs {
		byID[d.ID] = d
	}
	var missing []MemoryStats
	for _, m := range moved {
		st, ok := byID[statsID(m.objectID)]
		if !ok {
			// Made empty, so that the move below is the same update whoever made it.
			st = MemoryStats{ID: statsID(m.objectID), First: m.first}
			missing = append(missing, st)
		}
		st.Nodes += m.nodes
		if m.first.Before(st.First) {
			st.First = m.first
		}
		out[m.objectID] = st
	}
	if _, err := mongox.InsertNew(ctx, s.c(MemoryPostings), missing); err != nil {
		return nil, fmt.Errorf("store memory stats: %w", err)
	}
	return out, s.writeStats(ctx, moved)
}

// writeStats moves existing index stats ($inc of the count, $min of the first node's time) in one
// unordered update command.
func (s *Store) writeStats(ctx context.Context, moves []statsMove) error {
	if len(moves) == 0 {
		return nil
	}
	models := make([]mongo.WriteModel, len(moves))
	for i, m := range moves {
		models[i] = mongo.NewUpdateOneModel().SetFilter(mongox.ByID(statsID(m.objectID))).
			SetUpdate(bson.D{{Key: "$inc", Value: bson.D{{Key: "nodes", Value: m.nodes}}},
				{Key: "$min", Value: bson.D{{Key: "first", Value: m.first}}}})
	}
	if _, err := s.c(MemoryPostings).BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false)); err != nil {
		return fmt.Errorf("store memory stats: %w", err)
	}
	return nil
}

// SupersedePostings copies a node's validity fact onto postings (by _id; those that do not
// exist are left out): one update per mongox.MaxIDIn postings.
func (s *Store) SupersedePostings(ctx context.Context, ids []string, at time.Time, by string) error {
	return s.setPostings(ctx, ids, bson.D{{Key: "ia", Value: at}, {Key: "ib", Value: by}})
}

// setPostings sets fields of postings by _id, mongox.MaxIDIn at a time (what the embedded store
// serves from its index).
func (s *Store) setPostings(ctx context.Context, ids []string, set bson.D) error {
	if err := mongox.UpdateIn(ctx, s.c(MemoryPostings), ids, bson.D{{Key: "$set", Value: set}}); err != nil {
		return fmt.Errorf("store memory postings: %w", err)
	}
	return nil
}

// MemoryStatsOf reads an object's index stats (zero before its first node): a point read.
func (s *Store) MemoryStatsOf(ctx context.Context, objectID string) (MemoryStats, error) {
	var st MemoryStats
	if _, err := s.find(ctx, MemoryPostings, statsID(objectID), &st); err != nil {
		return MemoryStats{}, fmt.Errorf("store memory stats: %w", err)
	}
	return st, nil
}

// Postings reads a range of an object's postings of one stem (r.Scope is its PostingScope): one
// find.
func (s *Store) Postings(ctx context.Context, r mongox.Range) ([]MemoryEntry, error) {
	docs, err := mongox.Find[postingDoc](ctx, s.c(MemoryPostings), r)
	if err != nil {
		return nil, fmt.Errorf("store memory postings: %w", err)
	}
	out := make([]MemoryEntry, len(docs))
	for i, d := range docs {
		out[i] = d.MemoryEntry
	}
	return out, nil
}

// Cards reads, in one find by _id (one per mongox.MaxIDIn ids, all at once), the cards of nodes
// and the copies of objects' current hashes (hashCopy). Until UpgradeHashCopies has run, the
// hashes of objects without a copy are read from the Hashes projection itself, one find more.
// A node without a card is left out, as is an object graph-svc has not seen.
func (s *Store) Cards(ctx context.Context, nodeIDs, objectIDs []string) (map[string]NodeCard, map[string]string, error) {
	want := make(map[string]string, len(nodeIDs)+len(objectIDs)) // _id → node or object
	ids := make([]string, 0, len(nodeIDs)+len(objectIDs))
	for _, n := range nodeIDs {
		if id := scoredID(n); want[id] == "" {
			want[id] = n
			ids = append(ids, id)
		}
	}
	for _, o := range objectIDs {
		if id := hashCopyID(o); want[id] == "" {
			want[id] = o
			ids = append(ids, id)
		}
	}
	chunks := make([][]nodeCard, (len(ids)+mongox.MaxIDIn-1)/mongox.MaxIDIn)
	g, gctx := errgroup.WithContext(ctx)
	for c := range chunks {
		in := ids[c*mongox.MaxIDIn : min((c+1)*mongox.MaxIDIn, len(ids))]
		g.Go(func() (err error) {
			chunks[c], err = mongox.FindAll[nodeCard](gctx, s.c(MemoryPostings), mongox.IDIn(in))
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, nil, fmt.Errorf("store memory cards: %w", err)
	}
	cards, hashes := make(map[string]NodeCard, len(nodeIDs)), make(map[string]string, len(objectIDs))
	for _, docs := range chunks {
		for _, d := range docs {
			if strings.HasPrefix(d.ID, hashCopyScope) {
				hashes[want[d.ID]] = d.Hash
				continue
			}
			stems, counts := unpackScored(d.Scored)
			cards[want[d.ID]] = NodeCard{Stems: stems, Counts: counts, ThreadID: d.ThreadID, Title: d.Title,
				Excerpt: d.Excerpt, MessageID: d.MessageID, SourceID: d.SourceID}
		}
	}
	var uncopied []string
	for _, o := range objectIDs {
		if _, ok := hashes[o]; !ok {
			uncopied = append(uncopied, o)
		}
	}
	if len(uncopied) > 0 && !s.hashesCopied.Load() {
		known, err := s.Hashes(ctx, uncopied)
		if err != nil {
			return nil, nil, err
		}
		maps.Copy(hashes, known)
	}
	return cards, hashes, nil
}

// memoryBatch bounds the documents of one insert into the index: a large batch (an upgrade's or
// a preload's) would otherwise outlast the client's timeout in one command.
const memoryBatch = 1000
