package e2e

import (
	"net/http"
	"testing"
)

// TestMessageIngressHidesPrivateHashes: a private object still receives messages, through its
// current hash or an old one, but the 201 never tells a sender the current hash of a private
// object: it answers with the hashes the sender used. A public object's current hash is public
// anyway and is shown.
func TestMessageIngressHidesPrivateHashes(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, _ := env.CreateObject(t, nil)
	hidden, hiddenKey := env.CreateObject(t, map[string]any{"visibility": "private"})
	env.Do(t, "POST", "/api/objects/claim-custom-hash", hiddenKey,
		map[string]any{"username": "hidden_one", "payment_reference": issueVoucher()}).Expect(t, http.StatusOK)
	const current = "svc_hidden_one"

	in := sendMessage(t, env, alice, hidden, "", "to your old hash")
	if in["to_hash"] != hidden || in["from_hash"] != alice {
		t.Fatalf("a send to a private object's old hash answered %v; want to_hash %s (the hash used)", in, hidden)
	}
	out := sendMessage(t, env, hidden, alice, "", "from my old hash")
	if out["from_hash"] != hidden || out["to_hash"] != alice {
		t.Fatalf("a send from a private object's old hash answered %v; want from_hash %s (the hash used)", out, hidden)
	}
	// The same holds for a replayed send.
	req := Request{Method: "POST", Path: "/api/messages", Body: map[string]any{"from_hash": alice, "to_hash": hidden, "kind": "note", "body": "once"},
		Headers: map[string]string{"Idempotency-Key": "k-1"}}
	for range 2 {
		if got := env.Send(t, req).Expect(t, http.StatusCreated).JSON(t); got["to_hash"] != hidden {
			t.Fatalf("an idempotent send answered %v; want to_hash %s", got, hidden)
		}
	}
	// Its owner, through its current hash, finds both threads and the messages.
	threadsCounting(t, env, current, hiddenKey, "", 3)
	if direct := sendMessage(t, env, alice, current, "", "to your current hash"); direct["to_hash"] != current {
		t.Fatalf("a send to the current hash answered %v", direct)
	}
}
