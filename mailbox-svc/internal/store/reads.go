package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"golang.org/x/sync/errgroup"

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
// that has none yet; a receipt that exists already (a concurrent reader) keeps its time. Each
// message is first counted in the reader's ReadList of the thread (once, keyed by its id), so the
// reader's unread count is a difference of two lengths, and a failure between the two writes is
// finished by the next read without counting twice. The cost is bounded by len(messageIDs).
func (s *Store) MarkRead(ctx context.Context, threadID, readerID string, messageIDs []string, at time.Time) error {
	if len(messageIDs) == 0 {
		return nil
	}
	receipts := make([]Read, len(messageIDs))
	for i, id := range messageIDs {
		if _, _, err := mongox.AppendOnce(ctx, s.lists, ReadList(threadID, readerID), id, Mark{}); err != nil {
			return fmt.Errorf("store lists: receipt of %s: %w", id, err)
		}
		receipts[i] = Read{MessageID: id, ThreadID: threadID, ReaderID: readerID, ReadAt: at}
	}
	if _, err := mongox.InsertNew(ctx, s.reads, receipts); err != nil {
		return fmt.Errorf("store reads: %w", err)
	}
	return nil
}

// SyncRead records readerID's read count of a thread in its mailbox (BoxThread.Read), so that the
// mailbox shows the read at once; a thread the projection has not put there yet gets its
// BoxThread now, which the projection completes.
func (s *Store) SyncRead(ctx context.Context, threadID, readerID string, read int64) error {
	return s.raiseBoxThread(ctx, readerID, threadID, bson.D{{Key: "read", Value: read}})
}

// ReadTimes returns the read time of each of the messages that has been read: a point read per
// message.
func (s *Store) ReadTimes(ctx context.Context, messageIDs []string) (map[string]time.Time, error) {
	times := make([]*time.Time, len(messageIDs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(pointReaders)
	for i, id := range messageIDs {
		g.Go(func() error {
			var r Read
			err := mongox.FindOne(gctx, s.reads, mongox.ByID(id), &r, options.FindOne().SetProjection(bson.D{{Key: "read_at", Value: 1}}))
			if errors.Is(err, mongox.ErrNotFound) {
				return nil
			}
			if err != nil {
				return err
			}
			times[i] = &r.ReadAt
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("store reads: %w", err)
	}
	out := make(map[string]time.Time, len(messageIDs))
	for i, at := range times {
		if at != nil {
			out[messageIDs[i]] = *at
		}
	}
	return out, nil
}
