package mailbox

import (
	"context"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
)

// BlockStore is what sender blocks read and write.
type BlockStore interface {
	HashStore
	InsertBlock(ctx context.Context, b *store.SenderBlock, outbox events.Stager) (bool, error)
	Block(ctx context.Context, recipientID, senderID string) (*store.SenderBlock, error)
	InsertUnblock(ctx context.Context, u *store.Unblock) (bool, error)
	DeleteBlock(ctx context.Context, b *store.SenderBlock, outbox events.Stager) error
}

// Owner is the object whose mailbox a block protects, as the caller's token names it.
type Owner struct{ ObjectID, Hash string }

// Blocks keeps the senders an object's mailbox refuses.
type Blocks struct {
	Store  BlockStore
	Names  *Names
	Outbox Outbox
	// Cache is the senders' block cache (Sender.Blocked), which every write here retires.
	Cache *BlockCache
}

// Block makes owner's mailbox refuse messages from the object senderHash names, and returns the
// sender's hash as an answer shows it (see shownHash). Blocking a blocked sender again changes nothing and answers the same.
func (b *Blocks) Block(ctx context.Context, requestID string, owner Owner, senderHash string) (string, error) {
	if !apikey.ValidHash(senderHash) {
		return "", httpx.BadRequest(httpx.CodeInvalidRequest, "blocked_hash is not an object hash")
	}
	sender, err := b.Names.Resolve(ctx, senderHash, "object")
	if err != nil {
		return "", err
	}
	if sender.ObjectID == owner.ObjectID {
		return "", httpx.BadRequest(httpx.CodeInvalidRequest, "an object cannot block itself")
	}
	if err := b.Store.RememberHash(ctx, sender.ObjectID, sender.Hash); err != nil {
		return "", err
	}
	now := clock.Now()
	ev := blockEvent(events.SenderBlocked, requestID, owner, sender, now)
	doc := &store.SenderBlock{ID: store.BlockID(owner.ObjectID, sender.ObjectID), RecipientID: owner.ObjectID,
		SenderID: sender.ObjectID, CreatedAt: now, Instance: apikey.NewID("blk"), Events: events.IDs(ev)}
	if err := b.Outbox.Stage(ctx, store.SenderBlocks, doc.ID, ev); err != nil {
		return "", err
	}
	created, err := b.Store.InsertBlock(ctx, doc, b.Outbox)
	if err != nil {
		return "", err
	}
	b.Cache.changed(ctx, owner.ObjectID) // also when a retry finds the block written
	if created {
		b.Outbox.Confirm(ev)
	}
	return shownHash(sender, senderHash), nil
}

// Unblock lifts owner's block of the object senderHash names and returns the sender's hash as an
// answer shows it; 404 when there is no such block. The lifting is one insert keyed by the block
// (see store.SenderBlock), so concurrent and retried unblocks record one sender.unblocked, and a
// failure after it loses nothing.
func (b *Blocks) Unblock(ctx context.Context, requestID string, owner Owner, senderHash string) (string, error) {
	if !apikey.ValidHash(senderHash) {
		return "", httpx.NotFound("sender block")
	}
	sender, err := b.Names.Resolve(ctx, senderHash, "sender block")
	if err != nil {
		return "", err
	}
	block, err := b.Store.Block(ctx, owner.ObjectID, sender.ObjectID)
	if err != nil {
		return "", notFound(err, "sender block")
	}
	now := clock.Now()
	ev := blockEvent(events.SenderUnblocked, requestID, owner, sender, now)
	u := &store.Unblock{ID: block.UnblockID(), RecipientID: owner.ObjectID, SenderID: sender.ObjectID,
		UnblockedAt: now, Events: events.IDs(ev)}
	// The insert lifts the block and records the event; a concurrent or earlier unblock of the
	// same block already did both. The deletion only tidies up, and a retry finishes it.
	if err := b.Outbox.Stage(ctx, store.Unblocks, u.ID, ev); err != nil {
		return "", err
	}
	inserted, err := b.Store.InsertUnblock(ctx, u)
	if err != nil {
		return "", err
	}
	b.Cache.changed(ctx, owner.ObjectID)
	if inserted {
		b.Outbox.Confirm(ev)
	}
	if err := b.Store.DeleteBlock(ctx, block, b.Outbox); err != nil {
		return "", err
	}
	return shownHash(sender, senderHash), nil
}
