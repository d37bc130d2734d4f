package store

import (
	"context"
	"fmt"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// Block is the projection of mailbox-svc's sender blocks: whether a box blocks a sender now, as
// the latest sender.blocked or sender.unblocked event says. Its _id is BlockID(box, sender), so a
// publish checks it with one point read. Only the box's partition writes it, in event order;
// Event and At keep a replayed older event from undoing a newer one.
type Block struct {
	ID      string    `bson:"_id"`
	Blocked bool      `bson:"blocked"`
	At      time.Time `bson:"at"`
	Event   string    `bson:"event"`
}

// BlockID is the _id of the block of sender by box.
func BlockID(boxID, senderID string) string { return boxID + "|" + senderID }

// SetBlock records a block or its lifting, unless a later event is recorded already.
func (s *Store) SetBlock(ctx context.Context, b Block) error {
	var cur Block
	found, err := s.find(ctx, Blocks, b.ID, &cur)
	if err != nil {
		return fmt.Errorf("store blocks: %w", err)
	}
	if found && (cur.At.After(b.At) || (cur.At.Equal(b.At) && cur.Event >= b.Event)) {
		return nil
	}
	if err := mongox.ReplaceUpsert(ctx, s.c(Blocks), b.ID, b); err != nil {
		return fmt.Errorf("store blocks: %w", err)
	}
	return nil
}

// Blocks reports whether box blocks sender.
func (s *Store) Blocks(ctx context.Context, boxID, senderID string) (bool, error) {
	var b Block
	if _, err := s.find(ctx, Blocks, BlockID(boxID, senderID), &b); err != nil {
		return false, fmt.Errorf("store blocks: %w", err)
	}
	return b.Blocked, nil
}
