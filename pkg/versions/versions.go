// Package versions keeps one validator token per key in Redis: a random token that every write of
// what the key names replaces. A reader takes the token before it reads the store, so what it
// labels with the token is never older than the label: a write that lands between the two has
// already replaced the token. HTTP validators (ETags) and in-process caches are built on it.
package versions

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// Tokens are the validators of one namespace of keys.
type Tokens struct {
	rdb    *redis.Client
	log    *slog.Logger
	prefix string
	ttl    time.Duration
}

// New returns the validators kept in rdb under prefix. A token lives ttl at most (0: for ever),
// which bounds how long content that changes without a write can be taken as unchanged.
func New(rdb *redis.Client, log *slog.Logger, prefix string, ttl time.Duration) *Tokens {
	return &Tokens{rdb: rdb, log: log, prefix: prefix, ttl: ttl}
}

func newToken() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Changed replaces key's token; a writer calls it after its store write and before it answers.
func (t *Tokens) Changed(ctx context.Context, key string) {
	if err := t.rdb.Set(ctx, t.prefix+key, newToken(), t.ttl).Err(); err != nil {
		// The old token may then outlive the write: drop it, so that readers read in full.
		t.log.Warn("versions: replacing a token failed", "key", t.prefix+key, "error", err)
		_ = t.rdb.Del(context.WithoutCancel(ctx), t.prefix+key).Err()
	}
}

// Peek returns key's token without making one: an error when there is none.
func (t *Tokens) Peek(ctx context.Context, key string) (string, error) {
	return t.rdb.Get(ctx, t.prefix+key).Result()
}

// Current returns key's token, making one when there is none.
func (t *Tokens) Current(ctx context.Context, key string) (string, error) {
	tok, err := t.rdb.Get(ctx, t.prefix+key).Result()
	if err == nil {
		return tok, nil
	}
	if !errors.Is(err, redis.Nil) {
		return "", err
	}
	// SetNX: a writer's token set meanwhile wins, and is what this reader labels its content with.
	if err := t.rdb.SetNX(ctx, t.prefix+key, newToken(), t.ttl).Err(); err != nil {
		return "", err
	}
	return t.rdb.Get(ctx, t.prefix+key).Result()
}
