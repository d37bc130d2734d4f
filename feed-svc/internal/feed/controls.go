package feed

import "context"

// BlockOwner tells whether an object blocks a sender now, from mailbox-svc, which owns the blocks
// (rpc.MailboxClient).
type BlockOwner interface {
	Blocked(ctx context.Context, objectID, senderID string) (bool, error)
}

// BlockGuard decides whether feed-svc's projection of an object's blocks has applied the
// object's latest block or unblock (controls.Guard): when it has not, mailbox-svc is asked.
type BlockGuard interface {
	Get(ctx context.Context, objectID, key string, projection, owner func(context.Context) (bool, error)) (bool, error)
}

// blocked reports whether box blocks the publisher. The projection of mailbox-svc's block events
// answers while it has applied the box's latest block control (pkg/controls); right after a
// block or an unblock, until it has, mailbox-svc answers (or the publish is refused with 503),
// so that a block binds every publish that starts after its 200, whatever backlog of events is
// ahead of its sender.blocked.
func (f *Feeds) blocked(ctx context.Context, boxID, senderID string) (bool, error) {
	projection := func(ctx context.Context) (bool, error) { return f.Store.Blocks(ctx, boxID, senderID) }
	if f.BlockGuard == nil || f.Mailbox == nil {
		return projection(ctx)
	}
	return f.BlockGuard.Get(ctx, boxID, boxID+"|"+senderID, projection, func(ctx context.Context) (bool, error) {
		return f.Mailbox.Blocked(ctx, boxID, senderID)
	})
}
