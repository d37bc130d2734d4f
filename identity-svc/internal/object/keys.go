package object

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/identity"
)

// MaxLabel bounds key and association labels.
const MaxLabel = 200

// Caller is the owner key a key-management request came with, and the object's current hash.
type Caller struct {
	ObjectID string
	KeyID    string
	Hash     string
}

// Rotated is the new owner key, shown once.
type Rotated struct {
	APIKey string
	KeyID  string
	At     string
}

// Rotate replaces the caller's owner key by a new one. Of concurrent rotations one wins and the
// others answer 409 with keys that never become live. Once the old key's revocation is stored
// the rotation has happened and the new key is handed back, even if the tombstone that makes
// gateways drop a cached copy of the old key could not be written (then the old key lives on in
// those caches for at most identity.KeyTTL, which is logged).
func (s *Service) Rotate(ctx context.Context, requestID string, c Caller) (*Rotated, error) {
	now := clock.Now()
	key, next := newOwnerKey(c.ObjectID, now)
	ev := keyEvent(events.KeyRotated, c.ObjectID, c.Hash, requestID, contract.KeyEventData{KeyID: c.KeyID, NewKeyID: next.KeyID})
	old, err := s.Store.Rotate(ctx, c.ObjectID, c.KeyID, next, now, s.Outbox, ev)
	if errors.Is(err, store.ErrTaken) {
		err = s.undo(ctx, apierr.Conflict(apierr.CodeConflict, "the key was rotated or revoked meanwhile"),
			func() error { return s.Store.DeleteKey(ctx, next.Digest) })
	}
	if err != nil {
		return nil, notFound(err, "key")
	}
	s.Outbox.Confirm(ev)
	s.remember(ctx, c.Hash, next)
	if err := s.tombstone(ctx, old.Digest); err != nil {
		s.Log.ErrorContext(ctx, "rotated key not tombstoned: gateways may accept it until their cache expires",
			"key_id", old.KeyID, "cache_ttl", identity.KeyTTL, "error", err)
	}
	return &Rotated{APIKey: key, KeyID: next.KeyID, At: clock.Format(now)}, nil
}

// tombstone writes the revocation tombstone of a key digest, retrying briefly.
func (s *Service) tombstone(ctx context.Context, digest string) error {
	var err error
	for attempt := range 3 {
		if err = identity.Revoke(ctx, s.Redis, digest); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt+1) * 50 * time.Millisecond):
		}
	}
	return err
}

// NewKey is what a sub-key creation asks for.
type NewKey struct {
	Label  string
	Scopes []string // nil is read and write
}

// MaxSubKeys bounds an object's active sub-keys.
const MaxSubKeys = 50

// CreateKey makes a sub-key; the returned key is shown once.
func (s *Service) CreateKey(ctx context.Context, requestID string, c Caller, in NewKey) (*store.Key, string, error) {
	if len(in.Label) > MaxLabel {
		return nil, "", apierr.BadRequest(apierr.CodeInvalidRequest, "label is longer than %d characters", MaxLabel)
	}
	scopes, err := normalizeScopes(in.Scopes)
	if err != nil {
		return nil, "", err
	}
	key, digest := apikey.Generate(apikey.SubPrefix)
	k := &store.Key{
		Digest: digest, KeyID: apikey.NewID("key"), ObjectID: c.ObjectID, Label: in.Label, Scopes: scopes,
		Prefix: apikey.DisplayPrefix(key), CreatedAt: clock.Now(),
	}
	// The object's sub-keys are bounded: every per-key limit (rate, streams) would otherwise
	// multiply with them.
	switch err := s.Store.TakeKeySlot(ctx, c.ObjectID, digest, MaxSubKeys); {
	case errors.Is(err, store.ErrNoKeySlot):
		return nil, "", apierr.QuotaExceeded("active sub-keys per object (revoke one first)", MaxSubKeys)
	case err != nil:
		return nil, "", err
	}
	ev := keyEvent(events.KeyCreated, c.ObjectID, c.Hash, requestID, contract.KeyEventData{KeyID: k.KeyID})
	k.Events = events.IDs(ev)
	if err := s.Outbox.Stage(ctx, store.Keys, digest, ev); err != nil {
		return nil, "", err
	}
	if err := s.Store.InsertKey(ctx, k); err != nil {
		return nil, "", err
	}
	s.Outbox.Confirm(ev)
	s.remember(ctx, c.Hash, k)
	return k, key, nil
}

// remember caches the principal of a key just made, so that gateways answer its first uses from
// Redis without a lookup (see identity.Remember). A failure only costs that lookup later.
func (s *Service) remember(ctx context.Context, hash string, k *store.Key) {
	p := &contract.Principal{ObjectID: k.ObjectID, Hash: hash, KeyID: k.KeyID, Owner: k.Owner, Scopes: k.Scopes}
	if err := identity.Remember(ctx, s.Redis, k.Digest, p); err != nil {
		s.Log.WarnContext(ctx, "new key not cached for gateways", "key_id", k.KeyID, "error", err)
	}
}

// normalizeScopes accepts a non-empty set of read, write and mailbox (default read and write).
func normalizeScopes(in []string) ([]string, error) {
	if in == nil {
		return []string{contract.ScopeRead, contract.ScopeWrite}, nil
	}
	if len(in) == 0 {
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "scopes must name at least one of read, write, mailbox")
	}
	var out []string
	for _, s := range in {
		if s != contract.ScopeRead && s != contract.ScopeWrite && s != contract.ScopeMailbox {
			return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "unknown scope %q: use read, write, mailbox", s)
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// KeysScope is the scope of the cursors of an object's keys list (httpx.SeqCursor).
func KeysScope(objectID string) string { return "keys:" + objectID }

// SubKeys lists a page of the object's active sub-keys, newest first, and the key id to page on
// from ("" on the last).
func (s *Service) SubKeys(ctx context.Context, objectID string, p store.Page) ([]store.Key, string, error) {
	return s.Store.SubKeys(ctx, objectID, p)
}

// RevokeKey revokes a sub-key of the caller's object.
func (s *Service) RevokeKey(ctx context.Context, requestID string, c Caller, keyID string) error {
	ev := keyEvent(events.KeyRevoked, c.ObjectID, c.Hash, requestID, contract.KeyEventData{KeyID: keyID})
	k, err := s.Store.RevokeKey(ctx, c.ObjectID, keyID, clock.Now(), s.Outbox, ev)
	if err != nil {
		return notFound(err, "key")
	}
	if err := identity.Revoke(ctx, s.Redis, k.Digest); err != nil {
		return apierr.Unavailable(err)
	}
	s.Outbox.Confirm(ev)
	if err := s.Store.FreeKeySlot(ctx, c.ObjectID, k.Digest, MaxSubKeys); err != nil {
		// The key is revoked; a create that finds every slot held reclaims revoked keys' slots.
		s.Log.WarnContext(ctx, "sub-key slot not freed", "key_id", k.KeyID, "error", err)
	}
	return nil
}

// VerifyKey returns the principal of an active key digest, for the gateway's cache misses.
func (s *Service) VerifyKey(ctx context.Context, digest string) (*contract.Principal, error) {
	k, err := s.Store.KeyByDigest(ctx, digest)
	if err != nil {
		return nil, notFound(err, "key")
	}
	obj, err := s.Store.Object(ctx, k.ObjectID)
	if err != nil {
		return nil, notFound(err, "key")
	}
	if err := s.Store.TouchKey(ctx, digest, clock.Now()); err != nil {
		// Last use is informative; a verification does not fail because it could not be noted.
		s.Log.WarnContext(ctx, "key usage not recorded", "error", err)
	}
	return &contract.Principal{ObjectID: obj.ID, Hash: obj.Hash, KeyID: k.KeyID, Owner: k.Owner, Scopes: k.Scopes}, nil
}
