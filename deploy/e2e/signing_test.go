package e2e

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/gowebpki/jcs"
)

// These tests sign and verify with go-jose and gowebpki/jcs directly, as a client outside svc
// would: nothing of svc's own signing code is used, so a mistake there cannot hide here.

// signedPayload is the canonical payload of a signed message (docs/api.md, "Signed messages").
func signedPayload(t *testing.T, from, to, kind, body string, threadID *string, signedAt, nonce string) []byte {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"from_hash": from, "to_hash": to, "kind": kind, "body": body,
		"thread_id": threadID, "signed_at": signedAt, "nonce": nonce})
	if err != nil {
		t.Fatal(err)
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// detachedJWS signs payload with priv under kid and returns the detached compact JWS.
func detachedJWS(t *testing.T, priv ed25519.PrivateKey, kid string, payload []byte) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.EdDSA, Key: jose.JSONWebKey{Key: priv, KeyID: kid}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.DetachedCompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// jwksOf reads an object's JWK Set with go-jose.
func jwksOf(t *testing.T, env *Env, hash string) (jose.JSONWebKeySet, []map[string]any) {
	t.Helper()
	res := env.Do(t, "GET", "/api/objects/"+hash+"/jwks.json", "", nil).Expect(t, 200)
	var set jose.JSONWebKeySet
	res.Decode(t, &set)
	var raw struct {
		Keys []map[string]any `json:"keys"`
	}
	res.Decode(t, &raw)
	return set, raw.Keys
}

func nonce() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// registerOwnerKey registers a new Ed25519 public key as hash's active signing key and returns
// the private key and its kid.
func registerOwnerKey(t *testing.T, env *Env, hash, key string) (ed25519.PrivateKey, string) {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	jwk := map[string]string{"kty": "OKP", "crv": "Ed25519", "x": base64.RawURLEncoding.EncodeToString(pub)}
	out := env.Do(t, "POST", "/api/objects/"+hash+"/signing-keys", key, map[string]any{"jwk": jwk}).Expect(t, 201).JSON(t)
	if out["held_by"] != "owner" {
		t.Fatalf("registered key: %v", out)
	}
	return priv, Str(t, out, "kid")
}

type signedSend struct {
	from, to, body, signedAt, nonce, kid string
	priv                                 ed25519.PrivateKey
}

func (s signedSend) request(t *testing.T) map[string]any {
	t.Helper()
	payload := signedPayload(t, s.from, s.to, "note", s.body, nil, s.signedAt, s.nonce)
	return map[string]any{"from_hash": s.from, "to_hash": s.to, "kind": "note", "body": s.body,
		"signature": detachedJWS(t, s.priv, s.kid, payload), "signed_at": s.signedAt, "nonce": s.nonce}
}

func TestSignedMessagesAreVerifiedAgainstTheSendersJWKS(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, aliceKey := env.CreateObject(t, nil)
	bob, bobKey := env.CreateObject(t, nil)
	_, before := jwksOf(t, env, alice)
	if len(before) != 1 || before[0]["held_by"] != "svc" || before[0]["status"] != "active" {
		t.Fatalf("a new object's jwks: %v", before)
	}
	priv, kid := registerOwnerKey(t, env, alice, aliceKey)
	_, keys := jwksOf(t, env, alice)
	if len(keys) != 2 || keys[1]["kid"] != before[0]["kid"] || keys[0]["kid"] != kid || keys[0]["status"] != "active" || keys[1]["status"] != "rotated" {
		t.Fatalf("alice's jwks after registering her key: %v", keys)
	}

	now := time.Now().UTC().Format(time.RFC3339Nano)
	send := signedSend{from: alice, to: bob, body: "signed hello", signedAt: now, nonce: nonce(), kid: kid, priv: priv}
	req := send.request(t)
	sent := env.Do(t, "POST", "/api/messages", "", req).Expect(t, 201).JSON(t)
	if sent["sender_verified"] != true || sent["kid"] != kid {
		t.Fatalf("signed send answered %v", sent)
	}
	thread := env.Do(t, "GET", "/api/threads/"+Str(t, sent, "thread_id"), bobKey, nil).Expect(t, 200).JSON(t)
	msg := thread["messages"].([]any)[0].(map[string]any)
	if msg["sender_verified"] != true || msg["kid"] != kid {
		t.Fatalf("thread read of a signed message: %v", msg)
	}

	t.Run("replay", func(t *testing.T) {
		env.Do(t, "POST", "/api/messages", "", req).ExpectError(t, 409, "SIGNATURE_REPLAYED")
	})
	t.Run("one byte changed", func(t *testing.T) {
		changed := send.request(t)
		changed["nonce"] = nonce()
		changed["body"] = "signed hellp"
		env.Do(t, "POST", "/api/messages", "", changed).ExpectError(t, 400, "INVALID_SIGNATURE")
	})
	t.Run("wrong kid", func(t *testing.T) {
		_, bobKeys := jwksOf(t, env, bob)
		for _, k := range []string{bobKeys[0]["kid"].(string), "not-a-kid-of-alice"} {
			wrong := send
			wrong.kid, wrong.nonce = k, nonce()
			env.Do(t, "POST", "/api/messages", "", wrong.request(t)).ExpectError(t, 400, "INVALID_SIGNATURE")
		}
	})
	t.Run("a key of the sender that is not the signer's", func(t *testing.T) {
		other := send
		other.kid, other.nonce = keys[1]["kid"].(string), nonce() // alice's rotated svc key, signed by another key
		env.Do(t, "POST", "/api/messages", "", other.request(t)).ExpectError(t, 400, "INVALID_SIGNATURE")
	})
	t.Run("old timestamp", func(t *testing.T) {
		old := send
		old.signedAt, old.nonce = time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano), nonce()
		env.Do(t, "POST", "/api/messages", "", old.request(t)).ExpectError(t, 400, "SIGNATURE_EXPIRED")
	})
	t.Run("signature fields go together", func(t *testing.T) {
		partial := send.request(t)
		delete(partial, "nonce")
		env.Do(t, "POST", "/api/messages", "", partial).ExpectError(t, 400, "INVALID_REQUEST")
	})
	t.Run("unsigned still works", func(t *testing.T) {
		out := sendMessage(t, env, alice, bob, "", "unsigned")
		if out["sender_verified"] != false || out["kid"] != nil || out["signature"] != nil {
			t.Fatalf("unsigned send answered %v", out)
		}
	})
}

func TestVerifiedOnlyRefusesUnverifiedSenders(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, aliceKey := env.CreateObject(t, nil)
	carol, carolKey := env.CreateObject(t, nil)
	bob, bobKey := env.CreateObject(t, nil)
	env.Do(t, "PUT", "/api/objects/"+bob+"/rules", bobKey,
		map[string]any{"body": `{"write":{"mailbox":"verified_only"}}`}).Expect(t, 200)

	// The rule binds sends a moment after the write (mailbox-svc learns it from context-svc's
	// event); from then on, every unsigned send is refused.
	env.Eventually(t, func() bool {
		r := env.Do(t, "POST", "/api/messages", "", map[string]any{"from_hash": alice, "to_hash": bob, "kind": "note", "body": "probe"})
		return r.Status == 403
	}, "an unsigned send to a verified_only box is refused")
	env.Do(t, "POST", "/api/messages", "", map[string]any{"from_hash": alice, "to_hash": bob, "kind": "note", "body": "hi"}).
		ExpectError(t, 403, "SENDER_UNVERIFIED")
	// A key of another object is no proof of being alice.
	env.Do(t, "POST", "/api/messages", carolKey, map[string]any{"from_hash": alice, "to_hash": bob, "kind": "note", "body": "hi"}).
		ExpectError(t, 403, "SENDER_UNVERIFIED")

	priv, kid := registerOwnerKey(t, env, alice, aliceKey)
	send := signedSend{from: alice, to: bob, body: "signed", signedAt: time.Now().UTC().Format(time.RFC3339Nano), nonce: nonce(), kid: kid, priv: priv}
	first := env.Do(t, "POST", "/api/messages", "", send.request(t)).Expect(t, 201).JSON(t)
	if first["sender_verified"] != true {
		t.Fatalf("signed send to a verified_only box: %v", first)
	}
	// A reply in the thread is held to the rule too.
	env.Do(t, "POST", "/api/messages", "", map[string]any{"from_hash": alice, "to_hash": bob, "kind": "note", "body": "again",
		"thread_id": first["thread_id"]}).ExpectError(t, 403, "SENDER_UNVERIFIED")
	// carol sends with her own key: svc signs for her.
	own := env.Do(t, "POST", "/api/messages", carolKey, map[string]any{"from_hash": carol, "to_hash": bob, "kind": "note", "body": "mine"}).
		Expect(t, 201).JSON(t)
	if own["sender_verified"] != true {
		t.Fatalf("send with the sender's own key: %v", own)
	}
}

func TestSendWithOwnKeyIsSignedBySvc(t *testing.T) {
	t.Parallel()
	env := Start(t)
	carol, carolKey := env.CreateObject(t, nil)
	bob, bobKey := env.CreateObject(t, nil)
	writer := env.Do(t, "POST", "/api/objects/"+carol+"/keys", carolKey, map[string]any{"label": "bot", "scopes": []string{"write"}}).Expect(t, 201).JSON(t)
	reader := env.Do(t, "POST", "/api/objects/"+carol+"/keys", carolKey, map[string]any{"label": "ro", "scopes": []string{"read"}}).Expect(t, 201).JSON(t)

	for _, c := range []struct {
		name, key string
		verified  bool
	}{{"owner key", carolKey, true}, {"sub-key with write", Str(t, writer, "key"), true}, {"read-only sub-key", Str(t, reader, "key"), false}} {
		sent := env.Do(t, "POST", "/api/messages", c.key, map[string]any{"from_hash": carol, "to_hash": bob, "kind": "note", "body": "by " + c.name}).
			Expect(t, 201).JSON(t)
		if sent["sender_verified"] != c.verified {
			t.Fatalf("%s: sender_verified %v, want %v", c.name, sent["sender_verified"], c.verified)
		}
		if !c.verified {
			continue
		}
		thread := env.Do(t, "GET", "/api/threads/"+Str(t, sent, "thread_id"), bobKey, nil).Expect(t, 200).JSON(t)
		msg := thread["messages"].([]any)[0].(map[string]any)
		sig, _ := msg["signature"].(map[string]any)
		if msg["sender_verified"] != true || sig == nil {
			t.Fatalf("%s: thread read %v", c.name, msg)
		}
		var threadID *string
		if id, ok := sig["thread_id"].(string); ok {
			threadID = &id
		}
		payload := signedPayload(t, Str(t, msg, "from_hash"), Str(t, msg, "to_hash"), Str(t, msg, "kind"), Str(t, msg, "body"),
			threadID, Str(t, sig, "signed_at"), Str(t, sig, "nonce"))
		set, _ := jwksOf(t, env, carol)
		keys := set.Key(Str(t, msg, "kid"))
		if len(keys) != 1 {
			t.Fatalf("%s: kid %v not in carol's jwks", c.name, msg["kid"])
		}
		jws, err := jose.ParseDetached(Str(t, sig, "jws"), payload, []jose.SignatureAlgorithm{jose.EdDSA})
		if err != nil {
			t.Fatalf("%s: parse the stored signature: %v", c.name, err)
		}
		if _, err := jws.Verify(keys[0].Key); err != nil {
			t.Fatalf("%s: svc's signature does not verify against jwks.json: %v", c.name, err)
		}
		// Anyone who reads the message holds its signature: sent again, anonymously, it is no new
		// verified message.
		replay := map[string]any{"from_hash": carol, "to_hash": bob, "kind": Str(t, msg, "kind"), "body": Str(t, msg, "body"),
			"signature": Str(t, sig, "jws"), "signed_at": Str(t, sig, "signed_at"), "nonce": Str(t, sig, "nonce")}
		if threadID != nil {
			replay["thread_id"] = *threadID
		}
		env.Do(t, "POST", "/api/messages", "", replay).ExpectError(t, 409, "SIGNATURE_REPLAYED")
		tampered, _ := jose.ParseDetached(Str(t, sig, "jws"), append(payload[:len(payload)-1:len(payload)-1], ' '), []jose.SignatureAlgorithm{jose.EdDSA})
		if tampered != nil {
			if _, err := tampered.Verify(keys[0].Key); err == nil {
				t.Fatalf("%s: a changed payload still verifies", c.name)
			}
		}
	}
}

func TestJWKSOfAPrivateObjectIsNotFound(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hidden, key := env.CreateObject(t, map[string]any{"visibility": "private"})
	env.Do(t, "GET", "/api/objects/"+hidden+"/jwks.json", "", nil).ExpectError(t, http.StatusNotFound, "NOT_FOUND")
	env.Do(t, "GET", "/api/objects/"+hidden+"/jwks.json", key, nil).Expect(t, 200)
	if !strings.HasPrefix(hidden, "svc_") {
		t.Fatalf("hash %q", hidden)
	}
}
