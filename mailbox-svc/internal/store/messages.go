package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// Message is one message of a thread. It is written once, with the ids of its events.
type Message struct {
	ID        string    `bson:"_id"`
	ThreadID  string    `bson:"thread_id"`
	FromID    string    `bson:"from_id"`
	ToID      string    `bson:"to_id"`
	Kind      string    `bson:"kind"`
	Body      string    `bson:"body"`
	CreatedAt time.Time `bson:"created_at"`
	Events    []string  `bson:"_events,omitempty"`
}

// Read is the read receipt of one message, written when its recipient first reads its thread.
// Its id is the message's, so a message is read once however many readers race.
type Read struct {
	MessageID string    `bson:"_id"`
	ThreadID  string    `bson:"thread_id"`
	ReaderID  string    `bson:"reader_id"`
	ReadAt    time.Time `bson:"read_at"`
}

// InsertMessage stores a message; false if one with its id exists (a retried send).
func (s *Store) InsertMessage(ctx context.Context, m *Message) (bool, error) {
	return s.insertOnce(ctx, Messages, m)
}

// Messages returns up to limit messages of a thread after the message id `after` ("" for the
// first), oldest first.
func (s *Store) Messages(ctx context.Context, threadID, after string, limit int) ([]Message, error) {
	filter := bson.D{{Key: "thread_id", Value: threadID}}
	if after != "" {
		filter = append(filter, bson.E{Key: "_id", Value: bson.D{{Key: "$gt", Value: after}}})
	}
	cur, err := s.c(Messages).Find(ctx, filter, options.Find().
		SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(limit)).SetProjection(withoutEvents))
	if err != nil {
		return nil, fmt.Errorf("store messages: %w", err)
	}
	var out []Message
	if err := cur.All(ctx, &out); err != nil {
		return nil, fmt.Errorf("store messages: %w", err)
	}
	return out, nil
}

// MarkRead writes a read receipt, dated at, for every message of the thread sent to readerID
// that has none yet.
func (s *Store) MarkRead(ctx context.Context, threadID, readerID string, at time.Time) error {
	inbound, err := s.ids(ctx, Messages, bson.D{{Key: "thread_id", Value: threadID}, {Key: "to_id", Value: readerID}})
	if err != nil {
		return err
	}
	if len(inbound) == 0 {
		return nil
	}
	read, err := s.ids(ctx, Reads, bson.D{{Key: "thread_id", Value: threadID}, {Key: "reader_id", Value: readerID}})
	if err != nil {
		return err
	}
	seen := make(map[string]bool, len(read))
	for _, id := range read {
		seen[id] = true
	}
	var receipts []any
	for _, id := range inbound {
		if !seen[id] {
			receipts = append(receipts, Read{MessageID: id, ThreadID: threadID, ReaderID: readerID, ReadAt: at})
		}
	}
	if len(receipts) == 0 {
		return nil
	}
	_, err = s.c(Reads).InsertMany(ctx, receipts, options.InsertMany().SetOrdered(false))
	if err != nil && !mongox.OnlyDuplicateKeys(err) {
		return fmt.Errorf("store reads: %w", err)
	}
	return nil
}

// ReadTimes returns the read time of each of the messages that has been read.
func (s *Store) ReadTimes(ctx context.Context, messageIDs []string) (map[string]time.Time, error) {
	out := make(map[string]time.Time, len(messageIDs))
	if len(messageIDs) == 0 {
		return out, nil
	}
	cur, err := s.c(Reads).Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: messageIDs}}}})
	if err != nil {
		return nil, fmt.Errorf("store reads: %w", err)
	}
	var reads []Read
	if err := cur.All(ctx, &reads); err != nil {
		return nil, fmt.Errorf("store reads: %w", err)
	}
	for _, r := range reads {
		out[r.MessageID] = r.ReadAt
	}
	return out, nil
}

// ids returns the _id of every document of coll matching filter.
func (s *Store) ids(ctx context.Context, coll string, filter bson.D) ([]string, error) {
	cur, err := s.c(coll).Find(ctx, filter, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", coll, err)
	}
	var docs []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("store %s: %w", coll, err)
	}
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.ID
	}
	return out, nil
}
