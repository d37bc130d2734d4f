package object

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/svcdev/svc/identity-svc/internal/store"
)

// The environment variables that configure the sealing: errors name them, never the secrets.
const (
	// EnvSigningKeysSecret is the current secret: it seals every new key and opens what it sealed.
	EnvSigningKeysSecret = "SIGNING_KEYS_SECRET"
	// EnvSigningKeysSecretsOld lists earlier secrets (comma-separated): they open what they
	// sealed and never seal, so that the current secret can be rotated.
	EnvSigningKeysSecretsOld = "SIGNING_KEYS_SECRETS_OLD"
)

// ErrSealedKeyUnopened says that a sealed signing key opens under none of the configured
// secrets: the secret it was sealed with is missing from the configuration.
var ErrSealedKeyUnopened = errors.New("sealed signing key opens under none of the configured secrets")

// sealedV2 starts a sealed key that names the secret that sealed it: "v2:<kid>:" then the
// AES-GCM nonce and ciphertext. A key sealed before key ids existed is the nonce and ciphertext
// alone (sealed under the one secret there was).
const sealedV2 = "v2:"

// kidLen is the length of a secret's key id: 8 hex characters of a hash of the secret, enough to
// tell the few secrets an operator keeps apart and too short to say anything of the secret.
const kidLen = 8

// Sealer seals the private halves of the signing keys svc holds (AES-256-GCM under the
// operator's SIGNING_KEYS_SECRET), so that a copy of the database alone signs nothing. A sealed
// key names the secret that sealed it by its key id, so that the secret can be rotated: new keys
// are sealed under the current secret, and earlier secrets (SIGNING_KEYS_SECRETS_OLD) still open
// the keys they sealed until Reseal has moved those to the current one.
type Sealer struct {
	current sealKey
	// keys are the current secret then the earlier ones, in the order configured.
	keys []sealKey
}

type sealKey struct {
	kid  string
	aead cipher.AEAD
}

// NewSealer reads the operator's current secret and any earlier ones: each 32 random bytes as 64
// hex characters or in base64 (openssl rand -hex 32, or -base64 32 as the Helm chart generates
// it). Empty earlier secrets are skipped, and one equal to the current is the current.
func NewSealer(current string, old ...string) (*Sealer, error) {
	cur, err := newSealKey(current)
	if err != nil {
		return nil, fmt.Errorf("%s must be 32 random bytes, as 64 hex characters or in base64", EnvSigningKeysSecret)
	}
	s := &Sealer{current: cur, keys: []sealKey{cur}}
	for i, o := range old {
		if o = strings.TrimSpace(o); o == "" {
			continue
		}
		k, err := newSealKey(o)
		if err != nil {
			return nil, fmt.Errorf("%s: secret %d must be 32 random bytes, as 64 hex characters or in base64", EnvSigningKeysSecretsOld, i+1)
		}
		if slices.ContainsFunc(s.keys, func(have sealKey) bool { return have.kid == k.kid }) {
			continue // the same secret listed twice
		}
		s.keys = append(s.keys, k)
	}
	return s, nil
}

func newSealKey(secret string) (sealKey, error) {
	secret = strings.TrimSpace(secret)
	key, err := hex.DecodeString(secret)
	if err != nil {
		key, err = base64.StdEncoding.DecodeString(secret)
	}
	if err != nil || len(key) != 32 {
		return sealKey{}, errors.New("not 32 bytes")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return sealKey{}, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return sealKey{}, err
	}
	return sealKey{kid: SecretKID(key), aead: aead}, nil
}

// SecretKID is the key id of a secret's 32 bytes, as sealed keys name it.
func SecretKID(key []byte) string {
	sum := sha256.Sum256(append([]byte("svc signing keys secret id\x00"), key...))
	return hex.EncodeToString(sum[:])[:kidLen]
}

// KID is the key id of the current secret.
func (s *Sealer) KID() string { return s.current.kid }

// KIDs are the key ids of the configured secrets, the current one first.
func (s *Sealer) KIDs() []string {
	out := make([]string, len(s.keys))
	for i, k := range s.keys {
		out[i] = k.kid
	}
	return out
}

// seal encrypts seed under the current secret, bound to the key's fact id (the additional
// data), so that a sealed key copied onto another object does not open.
func (s *Sealer) seal(seed []byte, factID string) []byte {
	k := s.current
	nonce := make([]byte, k.aead.NonceSize())
	_, _ = rand.Read(nonce)
	out := make([]byte, 0, len(sealedV2)+kidLen+1+len(nonce)+len(seed)+k.aead.Overhead())
	out = append(append(append(out, sealedV2...), k.kid...), ':')
	out = append(out, nonce...)
	return k.aead.Seal(out, nonce, seed, []byte(factID))
}

// kidOf reads the key id a sealed key names; ok is false for a key sealed before key ids.
func kidOf(sealed []byte) (kid string, body []byte, ok bool) {
	head := len(sealedV2) + kidLen + 1
	if len(sealed) < head || !bytes.HasPrefix(sealed, []byte(sealedV2)) || sealed[head-1] != ':' {
		return "", nil, false
	}
	return string(sealed[len(sealedV2) : head-1]), sealed[head:], true
}

func (k sealKey) open(body []byte, factID string) ([]byte, bool) {
	n := k.aead.NonceSize()
	if len(body) < n {
		return nil, false
	}
	seed, err := k.aead.Open(nil, body[:n], body[n:], []byte(factID))
	return seed, err == nil
}

// open returns the seed of a sealed key and the key id of the secret that opened it: the secret
// its key id names, or for a key sealed before key ids (or whose random nonce happens to read
// as a key id) each configured secret in turn.
func (s *Sealer) open(sealed []byte, factID string) ([]byte, string, error) {
	kid, body, named := kidOf(sealed)
	if named {
		for _, k := range s.keys {
			if k.kid != kid {
				continue
			}
			if seed, ok := k.open(body, factID); ok {
				return seed, k.kid, nil
			}
		}
	}
	for _, k := range s.keys {
		if seed, ok := k.open(sealed, factID); ok {
			return seed, k.kid, nil
		}
	}
	if named && !slices.Contains(s.KIDs(), kid) {
		return nil, "", fmt.Errorf("%w: it names secret id %s, which is neither %s nor one of %s (configured: %s)",
			ErrSealedKeyUnopened, kid, EnvSigningKeysSecret, EnvSigningKeysSecretsOld, strings.Join(s.KIDs(), ", "))
	}
	return nil, "", fmt.Errorf("%w (%s, %s)", ErrSealedKeyUnopened, EnvSigningKeysSecret, EnvSigningKeysSecretsOld)
}

// Reseal returns sealed sealed again under the current secret; changed is false when it already
// is (and opens). An error says that no configured secret opens it.
func (s *Sealer) Reseal(sealed []byte, factID string) (out []byte, changed bool, err error) {
	seed, kid, err := s.open(sealed, factID)
	if err != nil {
		return nil, false, err
	}
	if named, _, ok := kidOf(sealed); ok && named == s.current.kid && kid == s.current.kid {
		return sealed, false, nil
	}
	return s.seal(seed, factID), true, nil
}

// SealedKeyStore reads and replaces the sealed keys svc holds (store.Store).
type SealedKeyStore interface {
	NewestSealedKeys(ctx context.Context, objects int) ([]store.SealedKey, error)
	SealedKeysAfter(ctx context.Context, after string, objects int) ([]store.SealedKey, int, string, error)
	ReplaceSealed(ctx context.Context, factID string, sealed []byte) (bool, error)
}

// CheckSample is how many of the newest objects the start-up check reads the sealed keys of.
const CheckSample = 8

// Check opens the sealed keys of the newest objects (at most sample of them) with the configured
// secrets, so that a missing or wrong SIGNING_KEYS_SECRET stops the start instead of turning
// signing off: an error when there are sealed keys and none opens. failed counts those that did
// not open when others did (a secret dropped from SIGNING_KEYS_SECRETS_OLD too early), for the
// caller to warn of.
func (s *Sealer) Check(ctx context.Context, st SealedKeyStore, sample int) (opened, failed int, err error) {
	keys, err := st.NewestSealedKeys(ctx, sample)
	if err != nil {
		return 0, 0, fmt.Errorf("check the signing keys secret: %w", err)
	}
	var last error
	for _, k := range keys {
		if _, _, err := s.open(k.Sealed, k.FactID); err != nil {
			failed, last = failed+1, err
			continue
		}
		opened++
	}
	if len(keys) > 0 && opened == 0 {
		return 0, failed, fmt.Errorf("%s is missing or wrong: none of the %d signing keys sealed for the newest objects opens under the configured secrets (%s); "+
			"set %s to the secret they were sealed with (and earlier secrets in %s), or svc cannot sign for any of them: %w",
			EnvSigningKeysSecret, len(keys), strings.Join(s.KIDs(), ", "), EnvSigningKeysSecret, EnvSigningKeysSecretsOld, last)
	}
	return opened, failed, nil
}

// resealWriters is how many resealed keys ResealAll writes at once.
const resealWriters = 8

// ResealStats counts what Reseal did.
type ResealStats struct {
	// Objects and Keys are the objects read and the sealed keys they hold.
	Objects, Keys int
	// Resealed keys were moved to the current secret; the others already were, or Failed: no
	// configured secret opens them (FailedKeys names up to 20 of them by fact id).
	Resealed, Failed int
	FailedKeys       []string
}

// ResealAll seals every key svc holds under the current secret, reading page objects at a time
// (bounded memory). It is idempotent: a key already sealed under the current secret is left as
// it is, so a second run, or a run after one that stopped half-way, reseals only what is left. A
// key that no configured secret opens is counted in Failed and left as it is.
func (s *Sealer) ResealAll(ctx context.Context, st SealedKeyStore, page int, progress func(ResealStats)) (ResealStats, error) {
	var stats ResealStats
	after := ""
	for {
		keys, objects, next, err := st.SealedKeysAfter(ctx, after, page)
		if err != nil {
			return stats, err
		}
		// The writes of a page go a few at a time; each is one point update.
		var mu sync.Mutex
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(resealWriters)
		for _, k := range keys {
			stats.Keys++
			sealed, changed, err := s.Reseal(k.Sealed, k.FactID)
			if err != nil {
				stats.Failed++
				if len(stats.FailedKeys) < 20 {
					stats.FailedKeys = append(stats.FailedKeys, k.FactID)
				}
				continue
			}
			if !changed {
				continue
			}
			g.Go(func() error {
				replaced, err := st.ReplaceSealed(gctx, k.FactID, sealed)
				if replaced {
					mu.Lock()
					stats.Resealed++
					mu.Unlock()
				}
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return stats, err
		}
		stats.Objects += objects
		if next == "" {
			return stats, nil
		}
		after = next
		if progress != nil {
			progress(stats)
		}
	}
}
