package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
)

// MaxBlockedSenders bounds the blocked list one object can read back.
const MaxBlockedSenders = 10_000

// SenderBlock says that a recipient refuses messages from a sender. Its id is
// BlockID(recipient, sender), so that a send checks it with one point read.
type SenderBlock struct {
	ID          string    `bson:"_id"`
	RecipientID string    `bson:"recipient_id"`
	SenderID    string    `bson:"sender_id"`
	CreatedAt   time.Time `bson:"created_at"`
	Events      []string  `bson:"_events,omitempty"`
}

// Unblock records that a block was lifted; it carries the event of that change, since the block
// itself is deleted.
type Unblock struct {
	ID          string    `bson:"_id"`
	RecipientID string    `bson:"recipient_id"`
	SenderID    string    `bson:"sender_id"`
	UnblockedAt time.Time `bson:"unblocked_at"`
	Events      []string  `bson:"_events,omitempty"`
}

// BlockID is the id of the block of sender by recipient.
func BlockID(recipientID, senderID string) string { return recipientID + ":" + senderID }

// InsertBlock stores a block; false if the sender was already blocked.
func (s *Store) InsertBlock(ctx context.Context, b *SenderBlock) (bool, error) {
	return s.insertOnce(ctx, SenderBlocks, b)
}

// IsBlocked reports whether recipientID blocks senderID, with one point read on _id.
func (s *Store) IsBlocked(ctx context.Context, recipientID, senderID string) (bool, error) {
	err := s.c(SenderBlocks).FindOne(ctx, byID(BlockID(recipientID, senderID)),
		options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	if mongox.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store sender blocks: %w", err)
	}
	return true, nil
}

// DeleteBlock lifts a block and records the lifting with its event; ErrNotFound if there was
// no block. The block's own events, if still pending, are kept in outbox first: the sweep can no
// longer find the block to learn that they were written.
func (s *Store) DeleteBlock(ctx context.Context, u *Unblock, outbox events.Stager) error {
	id := BlockID(u.RecipientID, u.SenderID)
	var b SenderBlock
	err := s.c(SenderBlocks).FindOne(ctx, byID(id), options.FindOne().SetProjection(bson.D{{Key: events.EventsField, Value: 1}})).Decode(&b)
	if mongox.IsNotFound(err) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("store sender blocks: %w", err)
	}
	if err := outbox.Keep(ctx, b.Events...); err != nil {
		return err
	}
	res, err := s.c(SenderBlocks).DeleteOne(ctx, byID(id))
	if err != nil {
		return fmt.Errorf("store sender blocks: %w", err)
	}
	if res.DeletedCount == 0 {
		return ErrNotFound
	}
	if _, err := s.c(Unblocks).InsertOne(ctx, u); err != nil {
		return fmt.Errorf("store sender unblocks: %w", err)
	}
	return nil
}

// BlockedSenders returns the ids of the senders recipientID blocks, oldest block first.
func (s *Store) BlockedSenders(ctx context.Context, recipientID string) ([]string, error) {
	cur, err := s.c(SenderBlocks).Find(ctx, bson.D{{Key: "recipient_id", Value: recipientID}}, options.Find().
		SetSort(bson.D{{Key: "created_at", Value: 1}, {Key: "_id", Value: 1}}).SetLimit(MaxBlockedSenders).
		SetProjection(bson.D{{Key: "sender_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("store sender blocks: %w", err)
	}
	var docs []SenderBlock
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("store sender blocks: %w", err)
	}
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.SenderID
	}
	return out, nil
}
