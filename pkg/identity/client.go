// Package identity is the client of identity-svc's internal API that the gateway and the other
// services share: hash resolution and key verification, both cached in Redis. identity-svc
// invalidates the cached entries synchronously when a hash or a key changes.
package identity

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/rpc"
	"github.com/svcdev/svc/pkg/signing"
)

// ErrNotFound says that no object or key matches.
var ErrNotFound = errors.New("not found")

// ErrRevoked says that the key was revoked or rotated away.
var ErrRevoked = errors.New("key revoked")

// ErrNotCached says that Redis holds neither a principal nor a tombstone for a key digest.
var ErrNotCached = errors.New("key not cached")

// RevokedChannel is the Redis pub/sub channel on which Revoke announces a revoked key's digest,
// so that every gateway replica drops it from its in-process cache at once instead of trusting
// it until that cache's entry expires.
const RevokedChannel = "svc:key:revoked"

// Cache lifetimes. A revoked key is refused at once because revocation writes a tombstone that
// outlives any cached principal.
const (
	HashTTL      = 5 * time.Minute
	KeyTTL       = 5 * time.Minute
	TombstoneTTL = 2 * KeyTTL
	tombstone    = "revoked"
)

// HashCacheKey is the Redis key of a cached hash resolution.
func HashCacheKey(hash string) string { return "svc:hash:" + hash }

// KeyCacheKey is the Redis key of a cached key principal, by key digest.
func KeyCacheKey(digest string) string { return "svc:key:" + digest }

// SigningKeysCacheKey is the Redis key of an object's cached signing key set, by object_id;
// identity-svc deletes it whenever the object gets a new key.
func SigningKeysCacheKey(objectID string) string { return "svc:sigkeys:" + objectID }

// RevocationsKey counts the revocations made. Revoke raises it with the tombstone, in one
// transaction, before the revocation is answered: a gateway replica that reads it on each
// request knows that a principal it keeps in memory may have been revoked since, before the
// announcement on RevokedChannel reaches it.
const RevocationsKey = "svc:key:revocations"

// Revoke writes the tombstone of a key digest, so that every gateway refuses it from now on,
// counts it (RevocationsKey), and announces it on RevokedChannel, so that no replica's
// in-process cache keeps accepting it.
func Revoke(ctx context.Context, rdb *redis.Client, digest string) error {
	tx := rdb.TxPipeline()
	tx.Set(ctx, KeyCacheKey(digest), tombstone, TombstoneTTL)
	tx.Incr(ctx, RevocationsKey)
	if _, err := tx.Exec(ctx); err != nil {
		return err
	}
	return rdb.Publish(ctx, RevokedChannel, digest).Err()
}

// Revocations returns how many revocations were made (RevocationsKey; 0 before the first).
func (c *Client) Revocations(ctx context.Context) (int64, error) {
	n, err := c.rdb.Get(ctx, RevocationsKey).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return n, err
}

// Remember caches the principal of a key just made (an object's owner key, a sub-key, a rotated
// key), so that its first uses are answered from Redis: a gateway then needs no lookup, which a
// flood of unknown keys from the same address could have used up. SetNX: a tombstone written
// meanwhile is never overwritten.
func Remember(ctx context.Context, rdb *redis.Client, digest string, p *contract.Principal) error {
	raw, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return rdb.SetNX(ctx, KeyCacheKey(digest), raw, KeyTTL).Err()
}

// Object is a resolved object.
type Object struct {
	ObjectID      string              `json:"object_id"`
	Hash          string              `json:"hash"`
	Visibility    contract.Visibility `json:"visibility"`
	MailboxStatus string              `json:"mailbox_status"`
	// Admission is what the rules the object was created with say of admission, which identity-svc
	// keeps unchanged: mailbox-svc applies it to a send that arrives before any event told it the
	// object's rules (read-your-writes right after creation). Later rules come by events only.
	Admission *contract.Admission `json:"admission,omitempty"`
}

// Client calls identity-svc.
type Client struct {
	rpc *rpc.Client
	rdb *redis.Client
}

// NewClient returns a client of identity-svc at base; httpClient must add internal tokens.
func NewClient(base string, httpClient *http.Client, rdb *redis.Client) *Client {
	return &Client{rpc: rpc.New("identity-svc", base, httpClient, 0), rdb: rdb}
}

// Resolve returns the object a hash (current or previous) names.
func (c *Client) Resolve(ctx context.Context, hash string) (*Object, error) {
	var o Object
	if raw, err := c.rdb.Get(ctx, HashCacheKey(hash)).Bytes(); err == nil && json.Unmarshal(raw, &o) == nil {
		return &o, nil
	}
	if err := c.call(ctx, http.MethodGet, "/internal/v1/resolve/"+url.PathEscape(hash), nil, &o); err != nil {
		return nil, err
	}
	if raw, err := json.Marshal(o); err == nil {
		_ = c.rdb.Set(ctx, HashCacheKey(hash), raw, HashTTL).Err()
	}
	return &o, nil
}

// VerifyKey returns the principal of a key digest, or ErrNotFound / ErrRevoked.
func (c *Client) VerifyKey(ctx context.Context, digest string) (*contract.Principal, error) {
	p, err := c.CachedKey(ctx, digest)
	if !errors.Is(err, ErrNotCached) {
		return p, err
	}
	return c.LookupKey(ctx, digest)
}

// CachedKey returns the principal Redis holds for a key digest, ErrRevoked for a tombstone, or
// ErrNotCached. It costs identity-svc nothing. A principal found is kept for another KeyTTL, so
// that a key in use stays answered from Redis.
func (c *Client) CachedKey(ctx context.Context, digest string) (*contract.Principal, error) {
	raw, err := c.rdb.Get(ctx, KeyCacheKey(digest)).Bytes()
	if err != nil {
		return nil, ErrNotCached
	}
	if string(raw) == tombstone {
		return nil, ErrRevoked
	}
	var p contract.Principal
	if json.Unmarshal(raw, &p) != nil {
		return nil, ErrNotCached
	}
	// Only a principal's lifetime is extended, never a tombstone's (it must outlive principals).
	_ = c.rdb.Expire(ctx, KeyCacheKey(digest), KeyTTL).Err()
	return &p, nil
}

// LookupKey asks identity-svc for the principal of a key digest and caches it in Redis.
func (c *Client) LookupKey(ctx context.Context, digest string) (*contract.Principal, error) {
	var p contract.Principal
	if err := c.call(ctx, http.MethodPost, "/internal/v1/keys/verify", map[string]string{"digest": digest}, &p); err != nil {
		return nil, err
	}
	if raw, err := json.Marshal(p); err == nil {
		// SetNX: a tombstone written by a revocation meanwhile is never overwritten.
		_ = c.rdb.SetNX(ctx, KeyCacheKey(digest), raw, KeyTTL).Err()
	}
	return &p, nil
}

// Object returns the internal view of an object by its object_id.
func (c *Client) Object(ctx context.Context, objectID string) (*contract.Object, error) {
	var obj contract.Object
	if err := c.call(ctx, http.MethodGet, "/internal/v1/objects/"+url.PathEscape(objectID), nil, &obj); err != nil {
		return nil, err
	}
	return &obj, nil
}

// ReportProfile tells identity-svc an object's new context version and profile title, so that
// the object read reflects a context write at once (read-your-writes).
func (c *Client) ReportProfile(ctx context.Context, objectID string, update contract.ProfileUpdate) error {
	return c.call(ctx, http.MethodPost, "/internal/v1/objects/"+url.PathEscape(objectID)+"/profile", update, nil)
}

// SigningKeys returns an object's signing keys (public halves), oldest first. They are cached in
// Redis, and identity-svc deletes the entry when a key is added, so a verification never trusts
// a key set older than the last registration it could know of.
func (c *Client) SigningKeys(ctx context.Context, objectID string) (signing.KeySet, error) {
	var set signing.KeySet
	if raw, err := c.rdb.Get(ctx, SigningKeysCacheKey(objectID)).Bytes(); err == nil && json.Unmarshal(raw, &set) == nil {
		return set, nil
	}
	return c.FreshSigningKeys(ctx, objectID)
}

// FreshSigningKeys asks identity-svc for an object's key set past the cache, and caches it: for
// a kid the cached set does not know (a lookup that raced a registration may have cached the set
// from before it).
func (c *Client) FreshSigningKeys(ctx context.Context, objectID string) (signing.KeySet, error) {
	var set signing.KeySet
	if err := c.call(ctx, http.MethodGet, "/internal/v1/objects/"+url.PathEscape(objectID)+"/signing-keys", nil, &set); err != nil {
		return signing.KeySet{}, err
	}
	if raw, err := json.Marshal(set); err == nil {
		_ = c.rdb.Set(ctx, SigningKeysCacheKey(objectID), raw, KeyTTL).Err()
	}
	return set, nil
}

// Signature is a detached compact JWS made by identity-svc with an object's active key.
type Signature struct {
	JWS string `json:"jws"`
	KID string `json:"kid"`
}

// ErrOwnerHeldKey says that svc cannot sign for the object: its owner holds the active key.
var ErrOwnerHeldKey = errors.New("the owner holds the active signing key")

// Sign has identity-svc sign payload with the object's active key, on its owner's behalf.
func (c *Client) Sign(ctx context.Context, objectID string, payload []byte) (*Signature, error) {
	return c.sign(ctx, objectID, payload, false)
}

// SignBound signs as Sign does, with the protected header bound to the object's host: typ JOSE
// and jku, the object's jwks.json, for a document served from the object's own URLs.
func (c *Client) SignBound(ctx context.Context, objectID string, payload []byte) (*Signature, error) {
	return c.sign(ctx, objectID, payload, true)
}

func (c *Client) sign(ctx context.Context, objectID string, payload []byte, bindHost bool) (*Signature, error) {
	var out Signature
	in := struct {
		Payload  []byte `json:"payload"`
		BindHost bool   `json:"bind_host,omitempty"`
	}{payload, bindHost}
	err := c.call(ctx, http.MethodPost, "/internal/v1/objects/"+url.PathEscape(objectID)+"/sign", in, &out)
	var status *rpc.StatusError
	if errors.As(err, &status) && status.Status == http.StatusConflict {
		return nil, ErrOwnerHeldKey
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// call maps rpc's not-found to this package's ErrNotFound, which callers already test for.
func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	err := c.rpc.Do(ctx, method, path, in, out)
	if errors.Is(err, rpc.ErrNotFound) {
		return ErrNotFound
	}
	return err
}
