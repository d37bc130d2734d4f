package versions

import (
	"context"

	lru "github.com/hashicorp/golang-lru/v2"
)

// Cache keeps values in this process, each labelled with its key's token: a value is served while
// its label is still the token, so a write through any process (which replaces the token) retires
// every process's copy at once. The token is taken before the value is read, so a value is never
// older than its label. Values must not be changed by those who get them.
type Cache[V any] struct {
	tokens  *Tokens
	entries *lru.Cache[string, labelled[V]]
}

type labelled[V any] struct {
	token string
	value V
}

// NewCache keeps the values of at most size keys, validated by tokens.
func NewCache[V any](tokens *Tokens, size int) *Cache[V] {
	entries, err := lru.New[string, labelled[V]](size)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return &Cache[V]{tokens: tokens, entries: entries}
}

// Get returns key's value: the cached one while it is current, else what read returns, which is
// kept under the token taken before it. Without a token (Redis failing) it reads and keeps nothing.
func (c *Cache[V]) Get(ctx context.Context, key string, read func(context.Context) (V, error)) (V, error) {
	return c.GetIn(ctx, key, key, read)
}

// GetIn is Get for one of the values that share the token of group: a write to any of them
// calls Changed(group) and retires them all.
func (c *Cache[V]) GetIn(ctx context.Context, group, key string, read func(context.Context) (V, error)) (V, error) {
	tok, err := c.tokens.Current(ctx, group)
	if err != nil {
		return read(ctx)
	}
	if e, ok := c.entries.Get(key); ok && e.token == tok {
		return e.value, nil
	}
	v, err := read(ctx)
	if err != nil {
		return v, err
	}
	c.entries.Add(key, labelled[V]{token: tok, value: v})
	return v, nil
}

// Changed replaces key's token: every process's cached value of it is retired.
func (c *Cache[V]) Changed(ctx context.Context, key string) { c.tokens.Changed(ctx, key) }

// Forget drops this process's value of key, for a write that other processes cannot have read.
func (c *Cache[V]) Forget(key string) { c.entries.Remove(key) }
