package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// Read is the read receipt of one message, written when its recipient first reads its thread.
// Its id is the message's, so a message is read once however many readers race.
type Read struct {
	MessageID string    `bson:"_id"`
	ThreadID  string    `bson:"thread_id"`
	ReaderID  string    `bson:"reader_id"`
	ReadAt    time.Time `bson:"read_at"`
}

// MarkRead writes a read receipt by readerID, dated at, for each of the messages of the thread
// that has none yet; a receipt that exists already (a concurrent reader) keeps its time. The cost
// is bounded by len(messageIDs).
func (s *Store) MarkRead(ctx context.Context, threadID, readerID string, messageIDs []string, at time.Time) error {
	if len(messageIDs) == 0 {
		return nil
	}
	receipts := make([]any, len(messageIDs))
	for i, id := range messageIDs {
		receipts[i] = Read{MessageID: id, ThreadID: threadID, ReaderID: readerID, ReadAt: at}
	}
	_, err := s.reads.InsertMany(ctx, receipts, options.InsertMany().SetOrdered(false))
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
	reads, err := mongox.FindAll[Read](ctx, s.reads, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: messageIDs}}}})
	if err != nil {
		return nil, err
	}
	for _, r := range reads {
		out[r.MessageID] = r.ReadAt
	}
	return out, nil
}
