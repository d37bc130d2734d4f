package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
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

// MarkRead writes a read receipt, dated at, for every message of the thread sent to readerID
// that has none yet.
func (s *Store) MarkRead(ctx context.Context, threadID, readerID string, at time.Time) error {
	inbound, err := ids(ctx, s.messages, bson.D{{Key: "thread_id", Value: threadID}, {Key: "to_id", Value: readerID}})
	if err != nil {
		return err
	}
	if len(inbound) == 0 {
		return nil
	}
	read, err := ids(ctx, s.reads, bson.D{{Key: "thread_id", Value: threadID}, {Key: "reader_id", Value: readerID}})
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
	_, err = s.reads.InsertMany(ctx, receipts, options.InsertMany().SetOrdered(false))
	if err != nil && !onlyDuplicates(err) {
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
	cur, err := s.reads.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: messageIDs}}}})
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
func ids(ctx context.Context, coll *mongo.Collection, filter bson.D) ([]string, error) {
	cur, err := coll.Find(ctx, filter, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", coll.Name(), err)
	}
	var docs []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("store %s: %w", coll.Name(), err)
	}
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.ID
	}
	return out, nil
}

// onlyDuplicates reports whether every failure of a bulk insert was a duplicate key: the
// documents were there already, which is what the caller wanted.
func onlyDuplicates(err error) bool {
	var bwe mongo.BulkWriteException
	if !errors.As(err, &bwe) {
		return mongox.IsDuplicateKey(err)
	}
	if bwe.WriteConcernError != nil || len(bwe.WriteErrors) == 0 {
		return false
	}
	for _, we := range bwe.WriteErrors {
		if we.Code != 11000 && !mongox.IsDuplicateKey(errors.New(we.Message)) {
			return false
		}
	}
	return true
}
