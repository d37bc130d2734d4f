package object

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/signing"
)

var (
	secretA = strings.Repeat("ab", 32) // testSealer's
	secretB = strings.Repeat("cd", 32)
	secretC = strings.Repeat("ef", 32)
)

// raw is the service's store itself, for the reads and writes the use cases do not make.
func raw(s *Service) *store.Store { return s.Store.(*store.Store) }

func sealerOf(t testing.TB, current string, old ...string) *Sealer {
	t.Helper()
	s, err := NewSealer(current, old...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// legacySeal seals seed as releases before key ids did: the AES-GCM nonce and ciphertext under
// the one secret, bound to the fact id, with nothing naming the secret.
func legacySeal(t *testing.T, secret string, seed []byte, factID string) []byte {
	t.Helper()
	key, _ := hex.DecodeString(secret)
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	aead, _ := cipher.NewGCM(block)
	nonce := make([]byte, aead.NonceSize())
	_, _ = rand.Read(nonce)
	return aead.Seal(nonce, nonce, seed, []byte(factID))
}

// sealedFact reads the sealed seed of key n of an object as stored.
func sealedFact(t *testing.T, s *Service, objectID string, n int) []byte {
	t.Helper()
	var doc struct {
		SigKey struct {
			Sealed []byte `bson:"sealed"`
		} `bson:"sigkey"`
	}
	err := raw(s).DB().Collection(store.Facts).FindOne(context.Background(),
		bson.D{{Key: "_id", Value: store.SigningKeyFactID(objectID, n)}}).Decode(&doc)
	if err != nil {
		t.Fatal(err)
	}
	return doc.SigKey.Sealed
}

// writeLegacy replaces key n of an object with the same seed sealed as an older release did,
// directly in the stored fact.
func writeLegacy(t *testing.T, s *Service, secret, objectID string, n int) {
	t.Helper()
	factID := store.SigningKeyFactID(objectID, n)
	seed, _, err := s.Sealer.open(sealedFact(t, s, objectID, n), factID)
	if err != nil {
		t.Fatal(err)
	}
	_, err = raw(s).DB().Collection(store.Facts).UpdateOne(context.Background(), bson.D{{Key: "_id", Value: factID}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "sigkey.sealed", Value: legacySeal(t, secret, seed, factID)}}}})
	if err != nil {
		t.Fatal(err)
	}
}

// signsAndVerifies signs for the object and checks the signature against its public key set.
func signsAndVerifies(t *testing.T, s *Service, objectID string) error {
	t.Helper()
	ctx := context.Background()
	signed, err := s.Sign(ctx, objectID, []byte("payload"), false)
	if err != nil {
		return err
	}
	set, err := s.SigningKeys(ctx, objectID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signing.Verify(signed.JWS, []byte("payload"), set); err != nil {
		t.Fatalf("signature of %s does not verify: %v", objectID, err)
	}
	return nil
}

func TestSealedKeysNameTheirSecret(t *testing.T) {
	t.Parallel()
	s := sealerOf(t, secretA)
	sealed := s.seal([]byte("0123456789abcdef0123456789abcdef"), "f")
	if !bytes.HasPrefix(sealed, []byte("v2:"+s.KID()+":")) {
		t.Fatalf("sealed key %q does not start with v2:%s:", sealed[:12], s.KID())
	}
	if other := sealerOf(t, secretB); other.KID() == s.KID() || len(other.KID()) != kidLen {
		t.Fatalf("key ids %s and %s", s.KID(), other.KID())
	}
	if _, _, err := s.open(sealed, "g"); !errors.Is(err, ErrSealedKeyUnopened) {
		t.Fatalf("opened under another fact id: %v", err)
	}
	// A secret that did not seal it names the secret that did, never a secret itself.
	_, _, err := sealerOf(t, secretB).open(sealed, "f")
	if !errors.Is(err, ErrSealedKeyUnopened) || !strings.Contains(err.Error(), s.KID()) ||
		!strings.Contains(err.Error(), EnvSigningKeysSecretsOld) || strings.Contains(err.Error(), secretA) || strings.Contains(err.Error(), secretB) {
		t.Fatalf("open under another secret: %v", err)
	}
	// An earlier secret opens what it sealed; it never seals.
	rotated := sealerOf(t, secretB, secretA)
	if seed, kid, err := rotated.open(sealed, "f"); err != nil || kid != s.KID() || string(seed) != "0123456789abcdef0123456789abcdef" {
		t.Fatalf("open under the earlier secret: %q %s %v", seed, kid, err)
	}
	if !bytes.HasPrefix(rotated.seal([]byte("x"), "f"), []byte("v2:"+rotated.KID()+":")) || rotated.KID() == s.KID() {
		t.Fatal("a rotated sealer does not seal under its current secret")
	}
}

func TestNewSealerNamesTheBadSetting(t *testing.T) {
	t.Parallel()
	if _, err := NewSealer(secretA, "", " "+secretB+" ", secretA); err != nil {
		t.Fatalf("blank, padded and repeated earlier secrets: %v", err)
	}
	if _, err := NewSealer("short"); err == nil || !strings.Contains(err.Error(), EnvSigningKeysSecret) {
		t.Fatalf("bad current secret: %v", err)
	}
	_, err := NewSealer(secretA, secretB, "oops")
	if err == nil || !strings.Contains(err.Error(), EnvSigningKeysSecretsOld+": secret 2") || strings.Contains(err.Error(), "oops") {
		t.Fatalf("bad earlier secret: %v", err)
	}
}

// TestLegacySealedKeysOpenAndReseal: keys sealed by today's format (no key id) still sign after
// the upgrade, under the same secret and, after a rotation, under the previous one listed in
// SIGNING_KEYS_SECRETS_OLD; ResealAll moves every key to the current secret, page by page, once.
func TestLegacySealedKeysOpenAndReseal(t *testing.T) {
	t.Parallel()
	s, _ := newService(t)
	ctx := context.Background()
	var ids []string
	for range 5 {
		c, _ := create(t, s, NewObject{})
		ids = append(ids, c.Object.ID)
	}
	// One object has a second key, so an object's every key is resealed.
	if _, err := s.RegisterSigningKey(ctx, Caller{ObjectID: ids[1]}, nil); err != nil {
		t.Fatal(err)
	}
	// The store as an older release left it: every key sealed without a key id.
	for i, id := range ids {
		writeLegacy(t, s, secretA, id, 1)
		if i == 1 {
			writeLegacy(t, s, secretA, id, 2)
		}
	}
	if _, ok := func() (string, bool) { k, _, ok := kidOf(sealedFact(t, s, ids[0], 1)); return k, ok }(); ok {
		t.Fatal("the legacy blob reads as a named one")
	}
	for _, id := range ids {
		if err := signsAndVerifies(t, s, id); err != nil {
			t.Fatalf("legacy key of %s under the same secret: %v", id, err)
		}
	}

	// Rotation: B is current, A is listed as earlier.
	s.Sealer = sealerOf(t, secretB, secretA)
	for _, id := range ids {
		if err := signsAndVerifies(t, s, id); err != nil {
			t.Fatalf("legacy key of %s under the earlier secret: %v", id, err)
		}
	}
	// A new key is sealed under the current secret.
	c, _ := create(t, s, NewObject{})
	ids = append(ids, c.Object.ID)
	if !bytes.HasPrefix(sealedFact(t, s, c.Object.ID, 1), []byte("v2:"+s.Sealer.KID()+":")) {
		t.Fatal("a new key is not sealed under the current secret")
	}

	stats, err := s.Sealer.ResealAll(ctx, raw(s), 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Objects != 6 || stats.Keys != 7 || stats.Resealed != 6 || stats.Failed != 0 {
		t.Fatalf("first reseal: %+v, want 6 objects, 7 keys, 6 resealed", stats)
	}
	again, err := s.Sealer.ResealAll(ctx, raw(s), 2, nil)
	if err != nil || again.Keys != 7 || again.Resealed != 0 {
		t.Fatalf("second reseal: %+v %v, want nothing resealed", again, err)
	}
	// The earlier secret can go: the current one alone signs for every object.
	s.Sealer = sealerOf(t, secretB)
	for _, id := range ids {
		if err := signsAndVerifies(t, s, id); err != nil {
			t.Fatalf("%s after the reseal, under the current secret alone: %v", id, err)
		}
		if !bytes.HasPrefix(sealedFact(t, s, id, 1), []byte("v2:"+s.Sealer.KID()+":")) {
			t.Fatalf("%s key 1 is not sealed under the current secret", id)
		}
	}
	// A reseal with a secret missing counts what it cannot open and leaves it.
	stats, err = sealerOf(t, secretC).ResealAll(ctx, raw(s), 4, nil)
	if err != nil || stats.Failed != 7 || stats.Resealed != 0 || len(stats.FailedKeys) != 7 {
		t.Fatalf("reseal without the secret: %+v %v", stats, err)
	}
	if err := signsAndVerifies(t, s, ids[0]); err != nil {
		t.Fatalf("a failed reseal changed a key: %v", err)
	}
}

// TestCheckRefusesASecretThatOpensNothing: the start-up check passes on an empty store and with
// the right secrets, and fails, naming SIGNING_KEYS_SECRET, when no sampled key opens.
func TestCheckRefusesASecretThatOpensNothing(t *testing.T) {
	t.Parallel()
	s, _ := newService(t)
	ctx := context.Background()
	if opened, failed, err := sealerOf(t, secretC).Check(ctx, raw(s), CheckSample); err != nil || opened+failed != 0 {
		t.Fatalf("empty store: %d %d %v", opened, failed, err)
	}
	for range CheckSample + 2 {
		create(t, s, NewObject{})
	}
	if opened, failed, err := s.Sealer.Check(ctx, raw(s), CheckSample); err != nil || opened != CheckSample || failed != 0 {
		t.Fatalf("right secret: %d opened, %d failed, %v", opened, failed, err)
	}
	if _, _, err := sealerOf(t, secretB, secretA).Check(ctx, raw(s), CheckSample); err != nil {
		t.Fatalf("the sealing secret as an earlier one: %v", err)
	}
	_, _, err := sealerOf(t, secretB).Check(ctx, raw(s), CheckSample)
	if err == nil || !strings.Contains(err.Error(), EnvSigningKeysSecret+" is missing or wrong") || strings.Contains(err.Error(), secretB) {
		t.Fatalf("wrong secret: %v", err)
	}
	// Some keys sealed under a secret no longer configured: the start goes on and says so.
	s.Sealer = sealerOf(t, secretB, secretA)
	create(t, s, NewObject{})
	if opened, failed, err := sealerOf(t, secretB).Check(ctx, raw(s), CheckSample); err != nil || opened != 1 || failed != CheckSample-1 {
		t.Fatalf("mixed: %d opened, %d failed, %v", opened, failed, err)
	}
}
