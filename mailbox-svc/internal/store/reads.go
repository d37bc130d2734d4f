package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/mongox"
)

// ReadState is what one participant of a thread has read: the spans of the thread its reads
// marked (a read marks the inbound messages of the page it returns), each with its time, and how
// many inbound messages they hold. A message is read when a span covers its sequence number, at
// the time of the first span that does; a span covers a range of sequence numbers, all of which
// were stored when it was written (a thread's numbers have no gaps), so it never covers a later
// message. The reader's unread count is its inbound count less Read: no scan.
type ReadState struct {
	Key      string     `bson:"_id"`
	ReaderID string     `bson:"reader_id"`
	ThreadID string     `bson:"thread_id"`
	Version  int64      `bson:"version"`
	Read     int64      `bson:"read"`
	Spans    []ReadSpan `bson:"spans"`
}

// ReadSpan is one read's mark: the messages From to To (sequence numbers) sent to the reader,
// read at At; N of them were not read before.
type ReadSpan struct {
	From int64     `bson:"from"`
	To   int64     `bson:"to"`
	At   time.Time `bson:"at"`
	N    int64     `bson:"n"`
}

// ReadStateKey is the _id of readerID's ReadState of a thread.
func ReadStateKey(readerID, threadID string) string { return mongox.Key(readerID, threadID) }

// ReadAt returns when the message seq (sent to the reader) was first read, and whether it was.
func (r *ReadState) ReadAt(seq int64) (time.Time, bool) {
	for _, s := range r.Spans {
		if s.From <= seq && seq <= s.To {
			return s.At, true
		}
	}
	return time.Time{}, false
}

// ReadStates returns the read states of the (reader, thread) pairs keys name, in one find by
// _id; a pair with none stored gets an empty state (Version 0).
func (s *Store) ReadStates(ctx context.Context, keys []string) (map[string]*ReadState, error) {
	got, err := mongox.FindIn[ReadState](ctx, s.readStates, keys)
	if err != nil {
		return nil, fmt.Errorf("store read states: %w", err)
	}
	out := make(map[string]*ReadState, len(keys))
	for i := range got {
		out[got[i].Key] = &got[i]
	}
	for _, k := range keys {
		if out[k] == nil {
			out[k] = &ReadState{Key: k}
		}
	}
	return out, nil
}

// SaveReadState writes next, whose Version is one more than that of the state it was made from,
// if that state is still the stored one: false, without error, when another read of the same
// reader changed it first (the caller reads it again and marks what is left). On MongoDB the
// check and the write are one atomic update; on FerretDB, whose updates are not isolated, two
// reads of one reader and thread at the same instant may still both pass: the marks of the one
// written first are then lost, and the next read of their page marks those messages again.
func (s *Store) SaveReadState(ctx context.Context, next *ReadState) (bool, error) {
	if next.Version == 1 {
		return insertOnce(ctx, s.readStates, next)
	}
	res, err := s.readStates.UpdateOne(ctx,
		bson.D{{Key: "_id", Value: next.Key}, {Key: "version", Value: next.Version - 1}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "version", Value: next.Version}, {Key: "read", Value: next.Read}, {Key: "spans", Value: next.Spans}}}})
	if err != nil {
		return false, fmt.Errorf("store read states: %w", err)
	}
	return res.MatchedCount == 1, nil
}
