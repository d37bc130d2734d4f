package oauth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Lifetimes of what the server keeps in Redis. Every replica reads the same records, so a
// request may be consented on one replica and redeemed on another.
const (
	RequestTTL = 10 * time.Minute
	CodeTTL    = time.Minute
	RefreshTTL = 30 * 24 * time.Hour
)

// request is an authorization request awaiting the owner's consent, kept under a random id the
// consent page carries; CSRF is the token its form must post back.
type request struct {
	ClientID    string   `json:"client_id"`
	RedirectURI string   `json:"redirect_uri"`
	State       string   `json:"state,omitempty"`
	Challenge   string   `json:"challenge"`
	Scopes      []string `json:"scopes"`
	CSRF        string   `json:"csrf"`
	// Set once the owner proved ownership with a key: the object, and the id and digest (never
	// the key) of the key that approves, checked again when the owner allows.
	ObjectID       string `json:"object_id,omitempty"`
	ApprovedBy     string `json:"approved_by,omitempty"`
	ApprovedDigest string `json:"approved_digest,omitempty"`
}

// grant is what an authorization code or a refresh token stands for: the grant's sub-key (by
// id and digest) and the client it was made for. A code also binds the redirect URI and the
// PKCE challenge.
type grant struct {
	ObjectID    string   `json:"object_id"`
	KeyID       string   `json:"key_id"`
	Digest      string   `json:"digest"`
	ClientID    string   `json:"client_id"`
	Scopes      []string `json:"scopes"`
	RedirectURI string   `json:"redirect_uri,omitempty"`
	Challenge   string   `json:"challenge,omitempty"`
}

// randomToken is 256 random bits, base64url: request ids, CSRF tokens, codes, refresh tokens.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// hashed is the Redis key of a code or refresh token: only its SHA-256 is stored, so a read of
// Redis yields nothing that can be redeemed.
func hashed(kind, token string) string {
	sum := sha256.Sum256([]byte(token))
	return "svc:oauth:" + kind + ":" + hex.EncodeToString(sum[:])
}

func requestKey(id string) string { return "svc:oauth:request:" + id }

var errGone = errors.New("oauth: unknown, used or expired")

func put(ctx context.Context, rdb *redis.Client, key string, v any, ttl time.Duration) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return rdb.Set(ctx, key, raw, ttl).Err()
}

func get(ctx context.Context, rdb *redis.Client, key string, v any) error {
	return decode(rdb.Get(ctx, key), v)
}

// take reads and deletes in one command (GETDEL): of two concurrent redemptions of one code or
// refresh token, exactly one gets it.
func take(ctx context.Context, rdb *redis.Client, key string, v any) error {
	return decode(rdb.GetDel(ctx, key), v)
}

// decode reads the record a GET or GETDEL answered into v; errGone if there was none.
func decode(cmd *redis.StringCmd, v any) error {
	raw, err := cmd.Bytes()
	if errors.Is(err, redis.Nil) {
		return errGone
	}
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, v)
}
