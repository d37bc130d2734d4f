package e2e

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/go-jose/go-jose/v4"

	"github.com/svcdev/svc/identity-svc/app"
	"github.com/svcdev/svc/pkg/config"
)

// svcSignsFor sends a message from one object to another with the sender's owner key (svc signs
// it with the sender's active key) and checks, as an outside client would, that the stored
// signature verifies against the sender's jwks.json.
func svcSignsFor(t *testing.T, env *Env, from, fromKey, to, toKey string) {
	t.Helper()
	sent := env.Do(t, "POST", "/api/messages", fromKey, map[string]any{"from_hash": from, "to_hash": to, "kind": "note", "body": "signed by svc"}).
		Expect(t, 201).JSON(t)
	if sent["sender_verified"] != true {
		t.Fatalf("send from %s: sender_verified %v, want true", from, sent["sender_verified"])
	}
	thread := env.Do(t, "GET", "/api/threads/"+Str(t, sent, "thread_id"), toKey, nil).Expect(t, 200).JSON(t)
	msgs := thread["messages"].([]any)
	msg := msgs[len(msgs)-1].(map[string]any)
	sig, _ := msg["signature"].(map[string]any)
	if sig == nil {
		t.Fatalf("send from %s: no signature on %v", from, msg)
	}
	var threadID *string
	if id, ok := sig["thread_id"].(string); ok {
		threadID = &id
	}
	payload := signedPayload(t, Str(t, msg, "from_hash"), Str(t, msg, "to_hash"), Str(t, msg, "kind"), Str(t, msg, "body"),
		threadID, Str(t, sig, "signed_at"), Str(t, sig, "nonce"))
	set, _ := jwksOf(t, env, from)
	keys := set.Key(Str(t, msg, "kid"))
	if len(keys) != 1 {
		t.Fatalf("send from %s: kid %v not in its jwks", from, msg["kid"])
	}
	jws, err := jose.ParseDetached(Str(t, sig, "jws"), payload, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jws.Verify(keys[0].Key); err != nil {
		t.Fatalf("send from %s: svc's signature does not verify against jwks.json: %v", from, err)
	}
}

// TestSigningKeysSecretRotates: a restart of identity-svc with a wrong SIGNING_KEYS_SECRET fails
// and names the setting (signing is never silently off); a new secret with the previous one in
// SIGNING_KEYS_SECRETS_OLD keeps every object's signatures verifying through the gateway, the
// reseal command moves every key to the new secret (once: a second run changes nothing), and then
// the new secret alone signs for old and new objects.
func TestSigningKeysSecretRotates(t *testing.T) {
	t.Parallel()
	env := Start(t)
	ctx := context.Background()
	carol, carolKey := env.CreateObject(t, nil)
	bob, bobKey := env.CreateObject(t, nil)
	svcSignsFor(t, env, carol, carolKey, bob, bobKey)

	const newSecret = "7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a"
	err := env.Stack.RestartReplicaWith(ctx, "identity-svc", 0, map[string]string{"SIGNING_KEYS_SECRET": newSecret})
	if err == nil || !strings.Contains(err.Error(), "SIGNING_KEYS_SECRET is missing or wrong") || strings.Contains(err.Error(), newSecret) {
		t.Fatalf("start with a wrong secret: %v; want a refusal naming SIGNING_KEYS_SECRET", err)
	}

	rotated := map[string]string{"SIGNING_KEYS_SECRET": newSecret, "SIGNING_KEYS_SECRETS_OLD": SigningKeysSecret}
	if err := env.Stack.RestartReplicaWith(ctx, "identity-svc", 0, rotated); err != nil {
		t.Fatalf("start with the previous secret kept: %v", err)
	}
	svcSignsFor(t, env, carol, carolKey, bob, bobKey)
	dave, daveKey := env.CreateObject(t, nil)
	svcSignsFor(t, env, dave, daveKey, carol, carolKey)

	identityEnv, err := env.Stack.Env("identity-svc", 0)
	if err != nil {
		t.Fatal(err)
	}
	var cfg app.ResealConfig
	if err := config.LoadMap(ctx, &cfg, identityEnv); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	stats, err := app.Reseal(ctx, cfg, log)
	if err != nil || stats.Objects != 3 || stats.Keys != 3 || stats.Resealed != 2 {
		t.Fatalf("reseal: %+v, %v; want 3 objects, 3 keys, 2 resealed (dave's was sealed under the new secret)", stats, err)
	}
	if again, err := app.Reseal(ctx, cfg, log); err != nil || again.Resealed != 0 || again.Keys != 3 {
		t.Fatalf("second reseal: %+v, %v; want nothing resealed", again, err)
	}

	if err := env.Stack.RestartReplicaWith(ctx, "identity-svc", 0, map[string]string{"SIGNING_KEYS_SECRET": newSecret, "SIGNING_KEYS_SECRETS_OLD": ""}); err != nil {
		t.Fatalf("start with the new secret alone: %v", err)
	}
	svcSignsFor(t, env, carol, carolKey, bob, bobKey)
	svcSignsFor(t, env, bob, bobKey, dave, daveKey)
	svcSignsFor(t, env, dave, daveKey, carol, carolKey)
}
