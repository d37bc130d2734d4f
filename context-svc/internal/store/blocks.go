package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// BlockList is the projection of one recipient's sender blocks (mailbox-svc owns them), kept
// from mailbox-svc's sender.blocked and sender.unblocked events for the owner's rules read: one
// document per recipient, so that the read is one point read. Only the consumer writes it, and
// a recipient's events arrive in order on one partition, so its read-then-write never races.
type BlockList struct {
	RecipientID string          `bson:"_id"`
	Senders     []BlockedSender `bson:"senders"`
}

// BlockedSender is one blocked sender, with its hash when it was blocked.
type BlockedSender struct {
	ObjectID  string    `bson:"object_id"`
	Hash      string    `bson:"hash"`
	BlockedAt time.Time `bson:"blocked_at"`
}

// SenderName is the current hash of an object whose hash changed after it was first seen.
type SenderName struct {
	ObjectID string `bson:"_id"`
	Hash     string `bson:"hash"`
}

func (s *Store) blockList(ctx context.Context, recipientID string) (*BlockList, error) {
	list := &BlockList{RecipientID: recipientID}
	err := mongox.FindOne(ctx, s.blocks, mongox.ByID(recipientID), list)
	if err != nil && !errors.Is(err, mongox.ErrNotFound) {
		return nil, err
	}
	return list, nil
}

func (s *Store) saveBlockList(ctx context.Context, list *BlockList) error {
	err := mongox.ReplaceUpsert(ctx, s.blocks, list.RecipientID, list)
	if err != nil {
		return fmt.Errorf("store blocks: %w", err)
	}
	return nil
}

// RecordBlock adds a blocked sender to the recipient's list; a sender already there stays as it
// was (a redelivered event changes nothing).
func (s *Store) RecordBlock(ctx context.Context, recipientID string, sender BlockedSender) error {
	list, err := s.blockList(ctx, recipientID)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(list.Senders, func(b BlockedSender) bool { return b.ObjectID == sender.ObjectID }) {
		return nil
	}
	list.Senders = append(list.Senders, sender)
	return s.saveBlockList(ctx, list)
}

// RecordUnblock removes a sender from the recipient's list.
func (s *Store) RecordUnblock(ctx context.Context, recipientID, senderID string) error {
	list, err := s.blockList(ctx, recipientID)
	if err != nil {
		return err
	}
	n := len(list.Senders)
	list.Senders = slices.DeleteFunc(list.Senders, func(b BlockedSender) bool { return b.ObjectID == senderID })
	if len(list.Senders) == n {
		return nil
	}
	return s.saveBlockList(ctx, list)
}

// SetSenderName records an object's new current hash.
func (s *Store) SetSenderName(ctx context.Context, objectID, hash string) error {
	err := mongox.ReplaceUpsert(ctx, s.names, objectID, SenderName{ObjectID: objectID, Hash: hash})
	if err != nil {
		return fmt.Errorf("store names: %w", err)
	}
	return nil
}

// BlockedHashes is the current hashes of the senders the recipient blocks, oldest block first:
// one point read for the list, and one per sender for a hash that changed since its block.
func (s *Store) BlockedHashes(ctx context.Context, recipientID string) ([]string, error) {
	list, err := s.blockList(ctx, recipientID)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list.Senders))
	for _, b := range list.Senders {
		var name SenderName
		switch err := mongox.FindOne(ctx, s.names, mongox.ByID(b.ObjectID), &name); {
		case err == nil:
			out = append(out, name.Hash)
		case errors.Is(err, mongox.ErrNotFound):
			out = append(out, b.Hash)
		default:
			return nil, err
		}
	}
	return out, nil
}
