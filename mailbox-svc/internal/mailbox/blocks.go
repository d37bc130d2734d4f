package mailbox

import (
	"context"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/controls"
	"github.com/svcdev/svc/pkg/events"
)

// BlockStore is what sender blocks read and write.
type BlockStore interface {
	HashStore
	InsertBlock(ctx context.Context, b *store.SenderBlock, outbox events.Stager) (bool, error)
	Block(ctx context.Context, recipientID, senderID string) (*store.SenderBlock, error)
	IsBlocked(ctx context.Context, recipientID, senderID string) (bool, error)
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
	// Controls takes the owner's control version of every block and unblock before it is
	// written, so that feed-svc and graph-svc judge every write after the 200 by it
	// (pkg/controls); nil takes none (a block then binds there once its event is consumed).
	Controls ControlVersions
}

// ControlVersions takes an object's next control version (controls.Versions).
type ControlVersions interface {
	Next(ctx context.Context, kind, objectID string) (int64, error)
}

// nextVersion takes owner's next block control version; a failure refuses the control, which
// could not bind at once without it.
func (b *Blocks) nextVersion(ctx context.Context, owner Owner) (int64, error) {
	if b.Controls == nil {
		return 0, nil
	}
	v, err := b.Controls.Next(ctx, controls.Blocks, owner.ObjectID)
	if err != nil {
		return 0, apierr.Retryable(err)
	}
	return v, nil
}

// Block makes owner's mailbox refuse messages from the object senderHash names, and returns the
// sender's hash as an answer shows it (see shownHash). Blocking a blocked sender again changes nothing and answers the same.
func (b *Blocks) Block(ctx context.Context, requestID string, owner Owner, senderHash string) (string, error) {
	if !apikey.ValidHash(senderHash) {
		return "", apierr.BadRequest(apierr.CodeInvalidRequest, "blocked_hash is not an object hash")
	}
	sender, err := b.Names.Resolve(ctx, senderHash, "object")
	if err != nil {
		return "", err
	}
	if sender.ObjectID == owner.ObjectID {
		return "", apierr.BadRequest(apierr.CodeInvalidRequest, "an object cannot block itself")
	}
	if err := b.Store.RememberHash(ctx, sender.ObjectID, sender.Hash); err != nil {
		return "", err
	}
	// A block already in place answers at once: a control version taken for a write that makes
	// no event would leave the enforcing services asking mailbox-svc until the next control.
	blocked, err := b.Store.IsBlocked(ctx, owner.ObjectID, sender.ObjectID)
	if err != nil {
		return "", err
	}
	if blocked {
		b.Cache.Changed(ctx, owner.ObjectID)
		return shownHash(sender, senderHash), nil
	}
	version, err := b.nextVersion(ctx, owner)
	if err != nil {
		return "", err
	}
	now := clock.Now()
	ev := blockEvent(events.SenderBlocked, requestID, owner, sender, now, version)
	doc := &store.SenderBlock{ID: store.BlockID(owner.ObjectID, sender.ObjectID), RecipientID: owner.ObjectID,
		SenderID: sender.ObjectID, CreatedAt: now, Instance: apikey.NewID("blk"), Events: events.IDs(ev)}
	if err := b.Outbox.Stage(ctx, store.SenderBlocks, doc.ID, ev); err != nil {
		return "", err
	}
	created, err := b.Store.InsertBlock(ctx, doc, b.Outbox)
	if err != nil {
		return "", err
	}
	b.Cache.Changed(ctx, owner.ObjectID) // also when a retry finds the block written
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
		return "", apierr.NotFound("sender block")
	}
	sender, err := b.Names.Resolve(ctx, senderHash, "sender block")
	if err != nil {
		return "", err
	}
	block, err := b.Store.Block(ctx, owner.ObjectID, sender.ObjectID)
	if err != nil {
		return "", notFound(err, "sender block")
	}
	version, err := b.nextVersion(ctx, owner)
	if err != nil {
		return "", err
	}
	now := clock.Now()
	ev := blockEvent(events.SenderUnblocked, requestID, owner, sender, now, version)
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
	b.Cache.Changed(ctx, owner.ObjectID)
	if inserted {
		b.Outbox.Confirm(ev)
	}
	if err := b.Store.DeleteBlock(ctx, block, b.Outbox); err != nil {
		return "", err
	}
	return shownHash(sender, senderHash), nil
}

// Blocked reports whether recipientID blocks senderID now, from mailbox-svc's own store: what
// feed-svc and graph-svc ask while their projections of the blocks are behind a control.
func (b *Blocks) Blocked(ctx context.Context, recipientID, senderID string) (bool, error) {
	return b.Store.IsBlocked(ctx, recipientID, senderID)
}
