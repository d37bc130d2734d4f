package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// MemoryIndex is the collection of the relationship-memory index (docs/architecture.md, "Memory
// search"). Every document is inserted once and read by _id:
//
//   - "e|<object>|<seq>": entry seq of the object's index, one node the object may see, with
//     what a search filters and ranks on (its stems and their counts). Its insert claims the
//     position, so concurrent writers never share one.
//   - "h|<object>": a hint of the object's newest position, moved on every HeadEvery-th entry;
//     readers step forward from it.
//   - "p|<object>|<level>|<block>|<stem>": the stem occurs in an entry at a position p with
//     p >> (BlockBits*level) == block. Level 1 blocks hold BlockSize entries, each level
//     BlockSize blocks of the one below. A search walks these newest first to the level-1
//     blocks that hold a stem, and reads their entries.
const MemoryIndex = "memory_index"

// Shape of the index.
const (
	// BlockBits is log2 of the fan-out of each level.
	BlockBits = 4
	// BlockSize is the number of entries of a level-1 block, and of blocks in a block above.
	BlockSize = 1 << BlockBits
	// MemoryLevels is the number of presence levels; above the top level a search probes
	// every top block (one per BlockSize^MemoryLevels entries).
	MemoryLevels = 4
	// HeadEvery is how often the head hint moves: a reader steps over at most that many
	// entries past it (and those concurrent writers added meanwhile).
	HeadEvery = 4
)

// MemoryEntry is one node in an object's index.
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
	// Stems and Counts are the node's most frequent stems (at most graph.MaxScoredStems) and
	// how often each occurs: a search scores the entry from them without reading the node.
	Stems  []string `bson:"st"`
	Counts []int    `bson:"tf"`
}

type memoryEntryDoc struct {
	ID          string `bson:"_id"`
	MemoryEntry `bson:",inline"`
}

type memoryMark struct {
	ID string `bson:"_id"`
}

type memoryHead struct {
	ID  string `bson:"_id"`
	Seq int64  `bson:"seq"`
}

func memoryEntryID(objectID string, seq int64) string {
	return "e|" + objectID + "|" + strconv.FormatInt(seq, 10)
}

func memoryHeadID(objectID string) string { return "h|" + objectID }

// PresenceID is the _id of the mark that stem occurs in block of level.
func PresenceID(objectID string, level int, block int64, stem string) string {
	return "p|" + objectID + "|" + strconv.Itoa(level) + "|" + strconv.FormatInt(block, 10) + "|" + stem
}

// MemoryHead is the newest position of an object's index (0: empty): the hint, then point reads
// forward to the first free position.
func (s *Store) MemoryHead(ctx context.Context, objectID string) (int64, error) {
	n, err := s.MemoryHint(ctx, objectID)
	if err != nil {
		return 0, err
	}
	for {
		var m memoryMark
		err := mongox.FindOne(ctx, s.c(MemoryIndex), mongox.ByID(memoryEntryID(objectID, n+1)), &m,
			options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}}))
		if errors.Is(err, mongox.ErrNotFound) {
			return n, nil
		}
		if err != nil {
			return 0, fmt.Errorf("store memory head: %w", err)
		}
		n++
	}
}

// MemoryHint reads the head hint alone: where a writer without a remembered position starts.
func (s *Store) MemoryHint(ctx context.Context, objectID string) (int64, error) {
	var h memoryHead
	if err := mongox.FindOne(ctx, s.c(MemoryIndex), mongox.ByID(memoryHeadID(objectID)), &h); err != nil && !errors.Is(err, mongox.ErrNotFound) {
		return 0, fmt.Errorf("store memory head: %w", err)
	}
	return h.Seq, nil
}

// InsertMemoryEntry inserts entry at position seq of an object's index together with the
// presence marks given, in one unordered insert. It reports whether the entry got the position
// (false: another writer holds it, and the caller tries the next one). A mark already there is
// left as it is, so marks may be sent again at no harm.
func (s *Store) InsertMemoryEntry(ctx context.Context, objectID string, seq int64, e MemoryEntry, marks []string) (bool, error) {
	got, err := s.InsertMemoryEntries(ctx, objectID, seq, []MemoryEntry{e}, marks)
	if err != nil {
		return false, err
	}
	return got[0], nil
}

// InsertMemoryEntries inserts entries at positions first, first+1, … of an object's index with
// the presence marks given, in one unordered insert, and reports which entries got their
// position (the others are held by another writer).
func (s *Store) InsertMemoryEntries(ctx context.Context, objectID string, first int64, entries []MemoryEntry, marks []string) ([]bool, error) {
	docs := make([]any, 0, len(entries)+len(marks))
	for i, e := range entries {
		docs = append(docs, memoryEntryDoc{ID: memoryEntryID(objectID, first+int64(i)), MemoryEntry: e})
	}
	for _, id := range marks {
		docs = append(docs, memoryMark{ID: id})
	}
	// In commands of at most memoryBatch documents: a large batch (a preload's) would otherwise
	// outlast the client's timeout in one command.
	in := make([]bool, 0, len(docs))
	for start := 0; start < len(docs); start += memoryBatch {
		got, err := mongox.InsertNew(ctx, s.c(MemoryIndex), docs[start:min(start+memoryBatch, len(docs))])
		if err != nil {
			return nil, fmt.Errorf("store memory entries: %w", err)
		}
		in = append(in, got...)
	}
	return in[:len(entries)], nil
}

// AdvanceMemoryHead moves the head hint to seq. A failure only leaves the hint behind, which
// readers step over, so it is not reported.
func (s *Store) AdvanceMemoryHead(ctx context.Context, objectID string, seq int64) {
	_ = mongox.Upsert(ctx, s.c(MemoryIndex), memoryHeadID(objectID), bson.D{{Key: "$max", Value: bson.D{{Key: "seq", Value: seq}}}})
}

// MemoryEntryAt reads entry seq of an object's index; mongox.ErrNotFound if none holds it.
func (s *Store) MemoryEntryAt(ctx context.Context, objectID string, seq int64) (*MemoryEntry, error) {
	var d memoryEntryDoc
	if err := mongox.FindOne(ctx, s.c(MemoryIndex), mongox.ByID(memoryEntryID(objectID, seq)), &d); err != nil {
		return nil, err
	}
	return &d.MemoryEntry, nil
}

// HasPresence reports whether a presence mark exists (one point read).
func (s *Store) HasPresence(ctx context.Context, id string) (bool, error) {
	var m memoryMark
	err := mongox.FindOne(ctx, s.c(MemoryIndex), mongox.ByID(id), &m)
	if errors.Is(err, mongox.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store memory presence: %w", err)
	}
	return true, nil
}

// memoryBatch bounds the documents of one insert into the index.
const memoryBatch = 1000

// LoadMemory writes entries at positions first, first+1, … of an object's index with the given
// presence marks, in unordered inserts of up to a thousand documents (marks already there are
// left), and moves the head hint past them. It fills an index in bulk (a benchmark's thousands
// of nodes), where the writes of one node at a time would take most of an hour.
func (s *Store) LoadMemory(ctx context.Context, objectID string, first int64, entries []MemoryEntry, marks []string) error {
	docs := make([]any, 0, len(entries)+len(marks))
	for i, e := range entries {
		docs = append(docs, memoryEntryDoc{ID: memoryEntryID(objectID, first+int64(i)), MemoryEntry: e})
	}
	for _, id := range marks {
		docs = append(docs, memoryMark{ID: id})
	}
	for len(docs) > 0 {
		n := min(len(docs), memoryBatch)
		if _, err := mongox.InsertNew(ctx, s.c(MemoryIndex), docs[:n]); err != nil {
			return fmt.Errorf("store memory load: %w", err)
		}
		docs = docs[n:]
	}
	if len(entries) > 0 {
		s.AdvanceMemoryHead(ctx, objectID, first+int64(len(entries))-1)
	}
	return nil
}
