package store

import (
	"context"
	"slices"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/svcdev/svc/pkg/versions"
)

// objectCache keeps folded objects in this replica, each labelled with the object's validator
// token (package versions), which every write of the object's facts replaces before it answers.
// A read takes the token before it reads the store, so a cached object is never older than its
// label, and a write through any replica retires every replica's copy at once. On FerretDB a
// fold scans the whole facts collection; a cache hit costs one Redis read.
type objectCache struct {
	tokens  *versions.Tokens
	entries *lru.Cache[string, cachedObject]
}

type cachedObject struct {
	token string
	obj   Object
}

// CacheObjects keeps up to size folded objects, validated by tokens (the validators that every
// writer of an object's facts replaces: the object's ETags).
func (s *Store) CacheObjects(tokens *versions.Tokens, size int) {
	entries, err := lru.New[string, cachedObject](size)
	if err != nil {
		panic(err) // only for a size below 1
	}
	s.cache = &objectCache{tokens: tokens, entries: entries}
}

// cached returns the object's cached copy when it is still current, and the token to label a
// fresh read with ("" when Redis cannot say: the read is then not cached).
func (c *objectCache) cached(ctx context.Context, id string) (*Object, string) {
	if c == nil {
		return nil, ""
	}
	tok, err := c.tokens.Current(ctx, id)
	if err != nil {
		return nil, ""
	}
	if e, ok := c.entries.Get(id); ok && e.token == tok {
		o := e.obj
		o.Hashes, o.SocialHandles = slices.Clone(o.Hashes), slices.Clone(o.SocialHandles)
		return &o, tok
	}
	return nil, tok
}

func (c *objectCache) add(id, token string, o *Object) {
	if c == nil || token == "" {
		return
	}
	cp := *o
	cp.Hashes, cp.SocialHandles = slices.Clone(o.Hashes), slices.Clone(o.SocialHandles)
	c.entries.Add(id, cachedObject{token: token, obj: cp})
}

func (c *objectCache) remove(id string) {
	if c != nil {
		c.entries.Remove(id)
	}
}
