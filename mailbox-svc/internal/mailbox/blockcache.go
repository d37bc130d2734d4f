package mailbox

import (
	"context"

	"github.com/svcdev/svc/pkg/versions"
)

// BlockCache keeps, in each process, whether a recipient blocks a sender, so that a send reads no
// block from the store while the recipient's blocks are unchanged. A recipient's entries share
// one token (pkg/versions), which every block and unblock of theirs replaces before it answers:
// the very next send, through any replica, reads the store again. A nil BlockCache caches nothing.
type BlockCache struct {
	entries *versions.Cache[bool]
}

// NewBlockCache keeps up to size (recipient, sender) answers, validated by tokens; below 1 it
// returns nil, which caches nothing.
func NewBlockCache(tokens *versions.Tokens, size int) *BlockCache {
	if size < 1 {
		return nil
	}
	return &BlockCache{entries: versions.NewCache[bool](tokens, size)}
}

// blocked answers whether recipientID blocks senderID: from the cache while the recipient's token
// is unchanged, else by read.
func (c *BlockCache) blocked(ctx context.Context, recipientID, senderID string, read func(context.Context) (bool, error)) (bool, error) {
	if c == nil {
		return read(ctx)
	}
	return c.entries.GetIn(ctx, recipientID, recipientID+"/"+senderID, read)
}

// changed retires every cached answer about recipientID's senders; call it after a block or an
// unblock is written and before answering.
func (c *BlockCache) changed(ctx context.Context, recipientID string) {
	if c != nil {
		c.entries.Changed(ctx, recipientID)
	}
}
