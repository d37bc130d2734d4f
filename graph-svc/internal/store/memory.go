package store

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/mongox"
)

// The relationship-memory index is kept in graph_log, as lists an object's search reads by _id:
//
//   - mem:<object_id>/<term>  the postings of one stemmed term among the nodes the object may see,
//     newest first when read; its length is the term's document frequency;
//   - memdocs:<object_id>     one entry per node indexed for the object; its length is the
//     number of indexed nodes, and each entry carries the running total of their lengths, so
//     the newest entry gives the average length BM25 needs.
//
// A search reads a bounded number of postings per query term, so its cost follows the query,
// not what the object's threads hold.

// Posting is one node in which a term occurs, with what a search filters and ranks on, so that
// a posting is judged without reading its node.
type Posting struct {
	NodeID     string     `bson:"n"`
	ThreadID   string     `bson:"t"`
	Type       string     `bson:"ty"`
	PeerID     string     `bson:"p,omitempty"`
	AuthorID   string     `bson:"a"`
	TF         int        `bson:"tf"`
	Len        int        `bson:"dl"`
	CreatedAt  time.Time  `bson:"c"`
	ValidFrom  *time.Time `bson:"vf,omitempty"`
	ValidUntil *time.Time `bson:"vu,omitempty"`
	MessageID  string     `bson:"m,omitempty"`
	SourceID   string     `bson:"s,omitempty"`
}

// MemoryDoc is an entry of an object's memdocs list.
type MemoryDoc struct {
	NodeID   string `bson:"n"`
	Len      int    `bson:"dl"`
	TotalLen int64  `bson:"total"`
}

func postingList(objectID, term string) string { return "mem:" + objectID + "/" + term }
func memDocsList(objectID string) string       { return "memdocs:" + objectID }

// AppendPosting lists a node under a term of an object's index.
func (s *Store) AppendPosting(ctx context.Context, objectID, term string, p Posting) error {
	_, err := mongox.Append(ctx, s.Log(), postingList(objectID, term), p)
	return err
}

// Postings reads up to limit postings of a term, newest first.
func (s *Store) Postings(ctx context.Context, objectID, term string, limit int) ([]mongox.Entry[Posting], error) {
	es, _, err := mongox.Page[Posting](ctx, s.Log(), postingList(objectID, term), 0, limit)
	return es, err
}

// TermCount is how many postings a term has in an object's index (its document frequency).
func (s *Store) TermCount(ctx context.Context, objectID, term string) (int64, error) {
	return s.Log().Len(ctx, postingList(objectID, term))
}

// AppendMemoryDoc counts a node indexed for an object, adding its length to the running total.
// Two concurrent appends may both read the same previous total: the total is a statistic for
// ranking (the average length), which such a race shifts by one node's length at most.
func (s *Store) AppendMemoryDoc(ctx context.Context, objectID, nodeID string, length int) error {
	_, total, err := s.MemoryStats(ctx, objectID)
	if err != nil {
		return err
	}
	_, err = mongox.Append(ctx, s.Log(), memDocsList(objectID), MemoryDoc{NodeID: nodeID, Len: length, TotalLen: total + int64(length)})
	return err
}

// MemoryStats is how many nodes an object's index holds and their total length: a length read
// and one point read.
func (s *Store) MemoryStats(ctx context.Context, objectID string) (docs, totalLen int64, err error) {
	l := s.Log()
	n, err := l.Len(ctx, memDocsList(objectID))
	if err != nil || n == 0 {
		return n, 0, err
	}
	e, err := mongox.Get[MemoryDoc](ctx, l, memDocsList(objectID), n)
	if err != nil {
		return 0, 0, err
	}
	return n, e.Value.TotalLen, nil
}

// GraphLogCollection is the collection of the lists, for a benchmark that fills an index in
// bulk.
func (s *Store) GraphLogCollection() *mongo.Collection { return s.c(GraphLog) }
