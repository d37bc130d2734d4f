package object

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/go-jose/go-jose/v4"

	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/signing"
)

// MaxSigningKeys bounds the keys an object keeps (active and rotated): a rotation past it is
// refused, so that a key set read stays small.
const MaxSigningKeys = 32

// CodeOwnerHeldKey says that svc cannot sign for an object whose active key its owner holds.
const CodeOwnerHeldKey = "OWNER_HELD_KEY"

// keySet is the public view of an object's signing keys.
func keySet(o *store.Object) signing.KeySet {
	out := signing.KeySet{Keys: make([]signing.Key, len(o.SigningKeys))}
	for i, k := range o.SigningKeys {
		out.Keys[i] = signing.Key{KID: k.KID, X: b64(k.Public), HeldBy: signing.HeldByOwner, CreatedAt: k.CreatedAt, RotatedAt: k.RotatedAt}
		if k.Sealed != nil {
			out.Keys[i].HeldBy = signing.HeldBySvc
		}
	}
	return out
}

// JWKS returns the key set of the object hash names as viewer may see it (a private object is
// not found for anyone but itself). An object without a key yet gets its first one.
func (s *Service) JWKS(ctx context.Context, hash, viewer string) (signing.JWKS, error) {
	obj, err := s.Read(ctx, hash, viewer)
	if obj, err = s.withKey(ctx, obj, err); err != nil {
		return signing.JWKS{}, err
	}
	return signing.PublicJWKS(keySet(obj)), nil
}

// SigningKeys returns an object's key set by id, giving it its first key if it has none.
func (s *Service) SigningKeys(ctx context.Context, objectID string) (signing.KeySet, error) {
	obj, err := s.ByID(ctx, objectID)
	if obj, err = s.withKey(ctx, obj, err); err != nil {
		return signing.KeySet{}, err
	}
	return keySet(obj), nil
}

// Signed is a detached compact JWS and the key that made it.
type Signed struct {
	JWS string `json:"jws"`
	KID string `json:"kid"`
}

// Sign signs payload with the object's active key on its owner's behalf: a detached compact JWS
// whose protected header carries alg EdDSA and the kid. With bindHost the header also carries
// typ JOSE and jku, the object's jwks.json under BaseURL: a verifier that finds the document it
// fetched served from another host than jku names knows it for a copy. 409 OWNER_HELD_KEY when
// the owner holds the active key.
func (s *Service) Sign(ctx context.Context, objectID string, payload []byte, bindHost bool) (*Signed, error) {
	obj, err := s.ByID(ctx, objectID)
	if obj, err = s.withKey(ctx, obj, err); err != nil {
		return nil, err
	}
	priv, kid, err := s.activeKey(obj)
	if err != nil {
		return nil, err
	}
	var opts *jose.SignerOptions
	if bindHost {
		opts = (&jose.SignerOptions{}).WithType("JOSE").WithHeader("jku", s.BaseURL+objectPath(obj.Hash)+"/jwks.json")
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA,
		Key: jose.JSONWebKey{Key: priv, KeyID: kid}}, opts)
	if err != nil {
		return nil, fmt.Errorf("signer: %w", err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	compact, err := jws.DetachedCompactSerialize()
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	return &Signed{JWS: compact, KID: kid}, nil
}

// activeKey opens the private half of obj's active key, which svc must hold: 409
// OWNER_HELD_KEY when the owner holds it.
func (s *Service) activeKey(obj *store.Object) (ed25519.PrivateKey, string, error) {
	n := len(obj.SigningKeys)
	active := obj.SigningKeys[n-1]
	if active.Sealed == nil {
		return nil, "", apierr.Conflict(CodeOwnerHeldKey, "the owner holds this object's active signing key; svc cannot sign for it")
	}
	seed, _, err := s.Sealer.open(active.Sealed, store.SigningKeyFactID(obj.ID, n))
	if err != nil {
		return nil, "", err
	}
	return ed25519.NewKeyFromSeed(seed), active.KID, nil
}

// withKey returns obj, read with err, with at least one signing key: an object made before keys
// existed, or whose first key was never made, gets one held by svc now.
func (s *Service) withKey(ctx context.Context, obj *store.Object, err error) (*store.Object, error) {
	if err != nil || len(obj.SigningKeys) > 0 {
		return obj, err
	}
	key, err := s.newHeldKey(obj.ID, 1)
	if err != nil {
		return nil, err
	}
	return s.addKey(ctx, obj, 1, key)
}

// firstKey gives a new object its first signing key, so that its first card or signed send does
// not write (and replace the object's validator, which labels the caches of other services'
// reads too). A failure is only logged: withKey makes the key when it is first needed.
func (s *Service) firstKey(ctx context.Context, obj *store.Object) {
	key, err := s.newHeldKey(obj.ID, 1)
	if err == nil {
		err = s.Store.AddSigningKey(ctx, obj.ID, 1, key, obj.CreatedAt)
	}
	if err != nil && !errors.Is(err, store.ErrTaken) {
		s.Log.WarnContext(ctx, "first signing key not made; it is made when first needed", "object_id", obj.ID, "error", err)
		return
	}
	key.CreatedAt = obj.CreatedAt
	obj.SigningKeys = []store.SigningKey{key}
}

// RegisterSigningKey makes a new active key for the caller's object: the owner's public key
// (ownerJWK, an Ed25519 JWK) or, when ownerJWK is empty, a new key held by svc. The previous key
// stays in the key set, marked rotated.
func (s *Service) RegisterSigningKey(ctx context.Context, c Caller, ownerJWK json.RawMessage) (*signing.Key, error) {
	obj, err := s.ByID(ctx, c.ObjectID)
	if err != nil {
		return nil, err
	}
	n := len(obj.SigningKeys) + 1
	if n > MaxSigningKeys {
		return nil, apierr.Conflict(apierr.CodeConflict, fmt.Sprintf("an object keeps at most %d signing keys", MaxSigningKeys))
	}
	var key store.SigningKey
	if len(ownerJWK) == 0 || string(ownerJWK) == "null" {
		if key, err = s.newHeldKey(obj.ID, n); err != nil {
			return nil, err
		}
	} else {
		pub, kid, err := signing.ParseOwnerJWK(ownerJWK)
		if err != nil {
			return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "jwk: %s", err)
		}
		if keySet(obj).Find(kid) != nil {
			return nil, apierr.Conflict(apierr.CodeConflict, "this key is already one of the object's signing keys")
		}
		key = store.SigningKey{KID: kid, Public: pub}
	}
	if obj, err = s.addKey(ctx, obj, n, key); err != nil {
		return nil, err
	}
	set := keySet(obj)
	k := set.Find(key.KID)
	if k == nil { // another rotation took number n: the caller's key is not the object's
		return nil, apierr.Conflict(apierr.CodeConflict, "another signing key was registered at the same time; retry")
	}
	return k, nil
}

// newHeldKey makes key number n of an object, held (sealed) by svc.
func (s *Service) newHeldKey(objectID string, n int) (store.SigningKey, error) {
	if s.Sealer == nil {
		return store.SigningKey{}, apierr.Errorf(http.StatusServiceUnavailable, apierr.CodeUnavailable, "signing keys are not configured")
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return store.SigningKey{}, fmt.Errorf("generate signing key: %w", err)
	}
	kid, err := signing.Thumbprint(pub)
	if err != nil {
		return store.SigningKey{}, err
	}
	return store.SigningKey{KID: kid, Public: pub, Sealed: s.Sealer.seal(priv.Seed(), store.SigningKeyFactID(objectID, n))}, nil
}

// addKey records key as key number n and returns the object read again. A lost race (another
// key took number n) is no error here: the object is returned with the winner's key.
func (s *Service) addKey(ctx context.Context, obj *store.Object, n int, key store.SigningKey) (*store.Object, error) {
	err := s.Store.AddSigningKey(ctx, obj.ID, n, key, clock.Now())
	if err != nil && !errors.Is(err, store.ErrTaken) {
		return nil, err
	}
	s.ETags.Changed(ctx, obj.ID)
	if err := s.Redis.Del(ctx, identity.SigningKeysCacheKey(obj.ID)).Err(); err != nil {
		return nil, fmt.Errorf("forget cached signing keys: %w", err)
	}
	fresh, err := s.Store.ObjectUncached(ctx, obj.ID)
	if err != nil {
		return nil, err
	}
	if len(fresh.SigningKeys) < n {
		return nil, errors.New("signing key not found after its insert")
	}
	return fresh, nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
