package store

import (
	"slices"

	"github.com/svcdev/svc/pkg/versions"
)

// CacheObjects keeps up to size folded objects in this replica (versions.Cache), validated by
// tokens: the validators that every writer of an object's facts replaces before it answers (the
// object's ETags). A fold costs about eight point reads (fold); a current cached object costs one
// Redis read.
func (s *Store) CacheObjects(tokens *versions.Tokens, size int) {
	s.cache = versions.NewCache[Object](tokens, size)
}

// clone copies an object's slices, so that a caller's change never reaches the cache.
func clone(o Object) *Object {
	o.Hashes, o.SocialHandles, o.SigningKeys = slices.Clone(o.Hashes), slices.Clone(o.SocialHandles), slices.Clone(o.SigningKeys)
	return &o
}
