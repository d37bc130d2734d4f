package store

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/mongox"
)

// MemoryPostings is the collection of the relationship-memory index (docs/architecture.md,
// "Memory search"). Its documents are keyed by the data a search reads them in:
//
//   - "p|<object>|<stem>|<created>|<node>": a posting, that node (one the object may see) holds
//     stem among its indexed stems. It carries everything a search filters and ranks on (the
//     node's scored stems and their counts), so that a query term is ONE range read, newest
//     first, bounded by a limit, and ranking reads no node.
//   - "n|<object>": how many nodes the object's index holds and when its first was made, for
//     BM25's idf. It is moved by $inc from whichever writer indexes a node, so on FerretDB (whose
//     updates are read-then-write) concurrent writers may lose an increment: the count only
//     weighs query terms against each other, never decides what is found.
//
// Every posting is inserted once, keyed by the node: a redelivered event inserts nothing new.
const MemoryPostings = "memory_postings"

// MemoryIndex is the collection of the index of earlier releases (positions and presence marks),
// read once by UpgradeMemory and then dropped.
const MemoryIndex = "memory_index"

// MemoryEntry is one node as the index of one object holds it.
type MemoryEntry struct {
	NodeID     string     `bson:"n"`
	ThreadID   string     `bson:"t"`
	Type       string     `bson:"ty"`
	PeerID     string     `bson:"p,omitempty"`
	AuthorID   string     `bson:"a"`
	CreatedAt  time.Time  `bson:"c"`
	ValidFrom  *time.Time `bson:"vf,omitempty"`
	ValidUntil *time.Time `bson:"vu,omitempty"`
	MessageID  string     `bson:"m,omitempty"`
	SourceID   string     `bson:"s,omitempty"`
	// Title and Excerpt (the body's start, bounded) let a hit say what it is without a read of
	// the node.
	Title   string `bson:"ti,omitempty"`
	Excerpt string `bson:"x,omitempty"`
	// Len is the node's length in stems (BM25's document length).
	Len int `bson:"dl"`
	// Stems and Counts are the node's most frequent stems (at most graph.MaxScoredStems), its
	// indexed stems first, and how often each occurs: a search scores the node on every query
	// term among them, whichever term found it.
	Stems  []string `bson:"st"`
	Counts []int    `bson:"tf"`
}

type postingDoc struct {
	ID          string `bson:"_id"`
	MemoryEntry `bson:",inline"`
}

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

// IndexMemory adds entries to an object's index: for each entry a posting per indexed stem
// (indexed[i] for entries[i]), all in one unordered insert, then one move of the object's stats
// by the entries that were new. It costs two commands whatever the entries hold.
func (s *Store) IndexMemory(ctx context.Context, objectID string, entries []MemoryEntry, indexed [][]string) error {
	var docs []postingDoc
	owner := []int{} // docs[i] belongs to entries[owner[i]]
	for i, e := range entries {
		for _, st := range indexed[i] {
			docs = append(docs, postingDoc{ID: PostingID(objectID, st, e.CreatedAt, e.NodeID), MemoryEntry: e})
			owner = append(owner, i)
		}
	}
	if len(docs) == 0 {
		return nil
	}
	in := make([]bool, 0, len(docs))
	for start := 0; start < len(docs); start += memoryBatch {
		got, err := mongox.InsertNew(ctx, s.c(MemoryPostings), docs[start:min(start+memoryBatch, len(docs))])
		if err != nil {
			return fmt.Errorf("store memory postings: %w", err)
		}
		in = append(in, got...)
	}
	added := map[int]bool{}
	first := time.Time{}
	for i, ok := range in {
		if ok {
			added[owner[i]] = true
			if c := entries[owner[i]].CreatedAt; first.IsZero() || c.Before(first) {
				first = c
			}
		}
	}
	if len(added) == 0 {
		return nil // indexed before: a redelivery
	}
	err := mongox.Upsert(ctx, s.c(MemoryPostings), statsID(objectID), bson.D{
		{Key: "$inc", Value: bson.D{{Key: "nodes", Value: int64(len(added))}}},
		{Key: "$min", Value: bson.D{{Key: "first", Value: first}}}})
	if err != nil {
		return fmt.Errorf("store memory stats: %w", err)
	}
	return nil
}

// MemoryStatsOf reads an object's index stats (zero before its first node): a point read.
func (s *Store) MemoryStatsOf(ctx context.Context, objectID string) (MemoryStats, error) {
	var st MemoryStats
	err := mongox.FindOne(ctx, s.c(MemoryPostings), mongox.ByID(statsID(objectID)), &st)
	if err != nil && !errors.Is(err, mongox.ErrNotFound) {
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

// memoryBatch bounds the documents of one insert into the index: a large batch (an upgrade's or
// a preload's) would otherwise outlast the client's timeout in one command.
const memoryBatch = 1000
