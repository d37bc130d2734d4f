package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
)

// SenderBlock says that a recipient refuses messages from a sender. Its id is
// BlockID(recipient, sender), so that a send checks it with one point read.
//
// A block is lifted by inserting its Unblock (whose id is the block's UnblockID) and only then
// deleting it: the insert is what lifts it, and carries sender.unblocked, so a failure after it
// loses nothing. Until the deletion catches up, a block whose Unblock exists is lifted.
type SenderBlock struct {
	ID          string    `bson:"_id"`
	RecipientID string    `bson:"recipient_id"`
	SenderID    string    `bson:"sender_id"`
	CreatedAt   time.Time `bson:"created_at"`
	// Instance tells this block apart from earlier blocks of the same sender that were lifted.
	Instance string   `bson:"instance,omitempty"`
	Events   []string `bson:"_events,omitempty"`
}

// UnblockID is the id of the Unblock that lifts this block: one per block, so that concurrent or
// retried unblocks of it record one lifting and one event.
func (b *SenderBlock) UnblockID() string {
	// A block stored before Instance is told apart by its time.
	return cmp.Or(b.Instance, b.ID+"@"+strconv.FormatInt(b.CreatedAt.UnixMilli(), 10))
}

// Unblock records that a block was lifted, with the event of that change.
type Unblock struct {
	ID          string    `bson:"_id"`
	RecipientID string    `bson:"recipient_id"`
	SenderID    string    `bson:"sender_id"`
	UnblockedAt time.Time `bson:"unblocked_at"`
	Events      []string  `bson:"_events,omitempty"`
}

// BlockID is the id of the block of sender by recipient.
func BlockID(recipientID, senderID string) string { return recipientID + ":" + senderID }

// InsertBlock stores a block; false if the sender is already blocked. A lifted block whose
// deletion did not happen yet gives way (its pending events kept in outbox).
func (s *Store) InsertBlock(ctx context.Context, b *SenderBlock, outbox events.Stager) (bool, error) {
	for range 3 {
		created, err := insertOnce(ctx, s.blocks, b)
		if err != nil || created {
			return created, err
		}
		prev, err := byID[SenderBlock](ctx, s.blocks, b.ID)
		if errors.Is(err, mongox.ErrNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return false, err
		}
		lifted, err := s.lifted(ctx, prev)
		if err != nil || !lifted {
			return false, err
		}
		if err := s.DeleteBlock(ctx, prev, outbox); err != nil {
			return false, err
		}
	}
	return false, fmt.Errorf("store sender blocks: %s keeps changing", b.ID)
}

// Block returns the block of sender by recipient, lifted or not; mongox.ErrNotFound if there is
// none.
func (s *Store) Block(ctx context.Context, recipientID, senderID string) (*SenderBlock, error) {
	return byID[SenderBlock](ctx, s.blocks, BlockID(recipientID, senderID))
}

// IsBlocked reports whether recipientID blocks senderID, with point reads on _id.
func (s *Store) IsBlocked(ctx context.Context, recipientID, senderID string) (bool, error) {
	b, err := s.Block(ctx, recipientID, senderID)
	if errors.Is(err, mongox.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store sender blocks: %w", err)
	}
	lifted, err := s.lifted(ctx, b)
	return !lifted, err
}

// lifted reports whether b's Unblock exists.
func (s *Store) lifted(ctx context.Context, b *SenderBlock) (bool, error) {
	err := mongox.FindOne(ctx, s.unblocks, mongox.ByID(b.UnblockID()), &struct{}{},
		options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if errors.Is(err, mongox.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store sender unblocks: %w", err)
	}
	return true, nil
}

// InsertUnblock records the lifting of a block (u.ID is the block's UnblockID), which lifts it;
// false if it was lifted already.
func (s *Store) InsertUnblock(ctx context.Context, u *Unblock) (bool, error) {
	return insertOnce(ctx, s.unblocks, u)
}

// DeleteBlock deletes a lifted block, and no later block of the same sender. The block's own
// events, if still pending, are kept in outbox first: the sweep can no longer find the block to
// learn that they were written.
func (s *Store) DeleteBlock(ctx context.Context, b *SenderBlock, outbox events.Stager) error {
	if err := outbox.Keep(ctx, b.Events...); err != nil {
		return err
	}
	filter := bson.D{{Key: "_id", Value: b.ID}, {Key: "instance", Value: b.Instance}}
	if b.Instance == "" {
		filter = bson.D{{Key: "_id", Value: b.ID}, {Key: "created_at", Value: b.CreatedAt}} // stored before Instance
	}
	_, err := s.blocks.DeleteOne(ctx, filter)
	if err != nil {
		return fmt.Errorf("store sender blocks: %w", err)
	}
	return nil
}
