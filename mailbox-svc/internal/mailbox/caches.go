package mailbox

import (
	"context"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/versions"
)

// TokenCache keeps, in each process, what a send reads of a recipient, so that it reads the store
// again only when that changed. A recipient's entries share one token (pkg/versions), which every
// write of what they hold replaces before it answers: the very next send, through any replica,
// reads the store again. A nil TokenCache caches nothing.
type TokenCache[V any] struct {
	entries *versions.Cache[V]
}

// BlockCache keeps whether a recipient blocks a sender; every block and unblock of the
// recipient's retires it.
type BlockCache = TokenCache[bool]

// AdmissionCache keeps recipients' projected rules (nil: none recorded); the admissions consumer
// retires them after each write of the projection.
type AdmissionCache = TokenCache[*store.Admission]

// NewBlockCache keeps up to size (recipient, sender) answers, validated by tokens; below 1 it
// returns nil, which caches nothing.
func NewBlockCache(tokens *versions.Tokens, size int) *BlockCache {
	return newTokenCache[bool](tokens, size)
}

// NewAdmissionCache keeps the rules of up to size recipients, validated by tokens; below 1 it
// returns nil, which caches nothing.
func NewAdmissionCache(tokens *versions.Tokens, size int) *AdmissionCache {
	return newTokenCache[*store.Admission](tokens, size)
}

func newTokenCache[V any](tokens *versions.Tokens, size int) *TokenCache[V] {
	if size < 1 {
		return nil
	}
	return &TokenCache[V]{entries: versions.NewCache[V](tokens, size)}
}

// get returns key's entry, one of recipientID's: from the cache while the recipient's token is
// unchanged, else by read.
func (c *TokenCache[V]) get(ctx context.Context, recipientID, key string, read func(context.Context) (V, error)) (V, error) {
	if c == nil {
		return read(ctx)
	}
	return c.entries.GetIn(ctx, recipientID, key, read)
}

// Changed retires every process's cached entries of recipientID; call it after a write of what
// they hold and before answering.
func (c *TokenCache[V]) Changed(ctx context.Context, recipientID string) {
	if c != nil {
		c.entries.Changed(ctx, recipientID)
	}
}
