package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/go-jose/go-jose/v4"
	"github.com/gowebpki/jcs"
)

// TestA2AClientSendsThroughTheCard resolves a box's card with the official a2a-go client's
// default resolver, and sends a message through the interface it names into the box's mailbox.
func TestA2AClientSendsThroughTheCard(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, aliceKey := env.CreateObject(t, nil)
	bob, bobKey := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Bob the agent\n\nAnswers questions about engines."})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	card, err := agentcard.DefaultResolver.Resolve(ctx, env.URL+"/api/objects/"+bob, agentcard.WithPath("agent-card.json"))
	if err != nil {
		t.Fatalf("resolve the card: %v", err)
	}
	if len(card.SupportedInterfaces) == 0 || card.SupportedInterfaces[0].ProtocolVersion != "1.0" ||
		card.SupportedInterfaces[0].ProtocolBinding != a2a.TransportProtocolHTTPJSON || card.Name != "Bob the agent" ||
		len(card.SecuritySchemes) == 0 || len(card.Signatures) != 1 {
		t.Fatalf("card: %+v", card)
	}
	client, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		t.Fatalf("client from the card: %v", err)
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Hello over A2A"))
	msg.Metadata = map[string]any{"from_hash": alice}
	res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	ack, ok := res.(*a2a.Message)
	if !ok || ack.ContextID == "" || ack.TaskID == "" || ack.Role != a2a.MessageRoleAgent {
		t.Fatalf("send answered %#v", res)
	}
	thread := env.Do(t, "GET", "/api/threads/"+ack.ContextID, bobKey, nil).Expect(t, 200).JSON(t)
	got := thread["messages"].([]any)[0].(map[string]any)
	if got["body"] != "Hello over A2A" || got["from_hash"] != alice || got["to_hash"] != bob || got["id"] != string(ack.TaskID) {
		t.Fatalf("the mailbox holds %v", got)
	}

	// The same messageId again is the same send (a retry), not a second message.
	again, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil || again.(*a2a.Message).TaskID != ack.TaskID {
		t.Fatalf("retried send: %#v, %v", again, err)
	}

	// contextId continues the thread; with alice's key the sender is alice and svc signs.
	next := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Second, signed"))
	next.ContextID = ack.ContextID
	second := env.Do(t, "POST", "/api/objects/"+bob+"/a2a/message:send", aliceKey, map[string]any{"message": next}).Expect(t, 200).JSON(t)
	meta := second["message"].(map[string]any)["metadata"].(map[string]any)
	if meta["thread_id"] != ack.ContextID || meta["sender_verified"] != true {
		t.Fatalf("continued send answered %v", second)
	}

	// The task is submitted until bob replies in the thread, then completed with the reply.
	taskPath := "/api/objects/" + bob + "/a2a/tasks/" + string(ack.TaskID)
	task := env.Do(t, "GET", taskPath, aliceKey, nil).Expect(t, 200).JSON(t)
	if task["status"].(map[string]any)["state"] != "TASK_STATE_SUBMITTED" || task["contextId"] != ack.ContextID {
		t.Fatalf("task before the reply: %v", task)
	}
	sendMessage(t, env, bob, alice, ack.ContextID, "Here is my answer")
	task = env.Do(t, "GET", taskPath, aliceKey, nil).Expect(t, 200).JSON(t)
	status := task["status"].(map[string]any)
	if status["state"] != "TASK_STATE_COMPLETED" {
		t.Fatalf("task after the reply: %v", task)
	}
	reply := status["message"].(map[string]any)["parts"].([]any)[0].(map[string]any)
	if reply["text"] != "Here is my answer" {
		t.Fatalf("task's reply: %v", status)
	}
	// Someone outside the thread does not see the task.
	_, carolKey := env.CreateObject(t, nil)
	env.Do(t, "GET", taskPath, carolKey, nil).ExpectError(t, 404, "NOT_FOUND")
	// Without a sender, the send is refused clearly.
	anon := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("who am I"))
	env.Do(t, "POST", "/api/objects/"+bob+"/a2a/message:send", "", map[string]any{"message": anon}).ExpectError(t, 400, "MISSING_FIELD")
	// A message without its required fields is 400 naming the field, never a server error.
	for field, msg := range map[string]map[string]any{
		"message.messageId": {"role": "ROLE_USER", "parts": []any{map[string]any{"text": "hi"}}},
		"message.role":      {"messageId": "m-1", "parts": []any{map[string]any{"text": "hi"}}},
		"message.parts":     {"messageId": "m-2", "role": "ROLE_USER"},
	} {
		resp := env.Do(t, "POST", "/api/objects/"+bob+"/a2a/message:send", aliceKey, map[string]any{"message": msg})
		resp.ExpectError(t, 400, "MISSING_FIELD")
		if !strings.Contains(string(resp.Body), field) {
			t.Errorf("a message without %s: %s, want the field named", field, resp.Body)
		}
	}
}

// TestAgentCardSignatureVerifiesAgainstJWKS checks the card's A2A §8.4 signature with go-jose
// against the object's jwks.json, and that a card with one byte changed does not verify.
func TestAgentCardSignatureVerifiesAgainstJWKS(t *testing.T) {
	t.Parallel()
	env := Start(t)
	bob, _ := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Bob\n\nSigned card."})
	raw := env.Do(t, "GET", "/api/objects/"+bob+"/agent-card.json", "", nil).Expect(t, 200).Body
	set, _ := jwksOf(t, env, bob)
	if err := verifyCard(raw, set); err != nil {
		t.Fatalf("the served card does not verify: %v", err)
	}
	var card map[string]any
	if err := json.Unmarshal(raw, &card); err != nil {
		t.Fatal(err)
	}
	card["name"] = "Bob!"
	changed, _ := json.Marshal(card)
	if err := verifyCard(changed, set); err == nil {
		t.Fatal("a card with its name changed still verifies")
	}
}

// verifyCard verifies every signature of an A2A agent card: a JWS whose payload is the RFC 8785
// canonical card without its signatures.
func verifyCard(raw []byte, set jose.JSONWebKeySet) error {
	var card map[string]any
	if err := json.Unmarshal(raw, &card); err != nil {
		return err
	}
	sigs, _ := card["signatures"].([]any)
	delete(card, "signatures")
	body, err := json.Marshal(card)
	if err != nil {
		return err
	}
	payload, err := jcs.Transform(body)
	if err != nil {
		return err
	}
	if len(sigs) == 0 {
		return errNoSignature
	}
	for _, s := range sigs {
		sig := s.(map[string]any)
		compact := sig["protected"].(string) + "." + base64.RawURLEncoding.EncodeToString(payload) + "." + sig["signature"].(string)
		jws, err := jose.ParseSigned(compact, []jose.SignatureAlgorithm{jose.EdDSA})
		if err != nil {
			return err
		}
		keys := set.Key(jws.Signatures[0].Protected.KeyID)
		if len(keys) != 1 {
			return errUnknownKID
		}
		if _, err := jws.Verify(keys[0].Key); err != nil {
			return err
		}
	}
	return nil
}

type cardError string

func (e cardError) Error() string { return string(e) }

const (
	errNoSignature = cardError("the card has no signature")
	errUnknownKID  = cardError("the card's kid is not in the object's jwks.json")
)

// checkCardHost is the host binding check a verifier makes of a card it fetched from cardURL:
// the protected header names typ JOSE and a jku on the card's own host; the card's interface and
// the object's did:web DID are on that host too; and the card verifies with the keys jku serves.
func checkCardHost(t *testing.T, env *Env, cardURL string, raw []byte) error {
	t.Helper()
	var card struct {
		SupportedInterfaces []struct {
			URL string `json:"url"`
		} `json:"supportedInterfaces"`
		Signatures []struct {
			Protected string `json:"protected"`
		} `json:"signatures"`
	}
	if err := json.Unmarshal(raw, &card); err != nil || len(card.Signatures) == 0 || len(card.SupportedInterfaces) == 0 {
		return cardError("not a signed card with an interface")
	}
	header, err := base64.RawURLEncoding.DecodeString(card.Signatures[0].Protected)
	if err != nil {
		return err
	}
	var h struct{ Typ, Jku string }
	if err := json.Unmarshal(header, &h); err != nil {
		return err
	}
	if h.Typ != "JOSE" {
		return cardError("typ is " + h.Typ)
	}
	host := func(s string) string {
		u, err := url.Parse(s)
		if err != nil {
			return ""
		}
		return u.Host
	}
	served := host(cardURL)
	if host(h.Jku) != served || host(card.SupportedInterfaces[0].URL) != served {
		return cardError("the card served from " + served + " names jku " + h.Jku + " and interface " + card.SupportedInterfaces[0].URL)
	}
	// The object's DID (its did.json beside jku) names the same host.
	did := env.Do(t, "GET", strings.TrimPrefix(strings.TrimSuffix(h.Jku, "/jwks.json")+"/did.json", env.URL), "", nil).Expect(t, 200).JSON(t)
	if !strings.HasPrefix(Str(t, did, "id"), "did:web:"+strings.Replace(served, ":", "%3A", 1)+":") {
		return cardError("the DID " + Str(t, did, "id") + " is not on " + served)
	}
	var set jose.JSONWebKeySet
	env.Do(t, "GET", strings.TrimPrefix(h.Jku, env.URL), "", nil).Expect(t, 200).Decode(t, &set)
	return verifyCard(raw, set)
}

// TestAgentCardIsBoundToItsHost: the card's signature names typ JOSE and its object's jwks.json
// as jku, so a verifier ties it to the host it came from; the same bytes served from another host
// fail that check, although their signature itself still verifies.
func TestAgentCardIsBoundToItsHost(t *testing.T) {
	t.Parallel()
	env := Start(t)
	bob, _ := env.CreateObject(t, map[string]any{"initial_llm_txt": "# Bob\n\nA card bound to its host."})
	path := "/api/objects/" + bob + "/agent-card.json"
	raw := env.Do(t, "GET", path, "", nil).Expect(t, 200).Body
	if err := checkCardHost(t, env, env.URL+path, raw); err != nil {
		t.Fatalf("the card served by svc fails the host check: %v", err)
	}
	copied := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(raw)
	}))
	defer copied.Close()
	res, err := http.Get(copied.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	copy, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	set, _ := jwksOf(t, env, bob)
	if err := verifyCard(copy, set); err != nil {
		t.Fatalf("the copy's signature: %v (the bytes are the same)", err)
	}
	if err := checkCardHost(t, env, copied.URL+path, copy); err == nil {
		t.Fatal("a copy of the card served from another host passes the host check")
	}
}

// TestServiceCardDeliversToAnyBox: svc's own card at /.well-known/agent-card.json is found by
// a2a-go's default resolver from the host alone, is signed with svc's key (typ JOSE, jku its key
// directory on the same host, the key svc's did:web document lists too), and its interface
// delivers a message to the box message.metadata.to_hash names; a message that names none is 400.
func TestServiceCardDeliversToAnyBox(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, _ := env.CreateObject(t, nil)
	bob, bobKey := env.CreateObject(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	card, err := agentcard.DefaultResolver.Resolve(ctx, env.URL)
	if err != nil {
		t.Fatalf("resolve svc's card: %v", err)
	}
	if card.Name != "svc" || len(card.SupportedInterfaces) != 1 || card.SupportedInterfaces[0].URL != env.URL+"/a2a" {
		t.Fatalf("card: %+v", card)
	}
	raw := env.Do(t, "GET", "/.well-known/agent-card.json", "", nil).Expect(t, 200).Body
	var signed struct {
		Signatures []struct {
			Protected string `json:"protected"`
		} `json:"signatures"`
	}
	if err := json.Unmarshal(raw, &signed); err != nil || len(signed.Signatures) != 1 {
		t.Fatalf("the card's signatures: %v %s", err, raw)
	}
	header, _ := base64.RawURLEncoding.DecodeString(signed.Signatures[0].Protected)
	var h struct{ Typ, Jku, Kid string }
	_ = json.Unmarshal(header, &h)
	if h.Typ != "JOSE" || h.Jku != env.URL+"/.well-known/http-message-signatures-directory" {
		t.Fatalf("protected header %s", header)
	}
	var keys jose.JSONWebKeySet
	env.Do(t, "GET", strings.TrimPrefix(h.Jku, env.URL), "", nil).Expect(t, 200).Decode(t, &keys)
	if err := verifyCard(raw, keys); err != nil {
		t.Fatalf("svc's card does not verify with the keys jku names: %v", err)
	}
	did := env.Do(t, "GET", "/.well-known/did.json", "", nil).Expect(t, 200).JSON(t)
	host := strings.TrimPrefix(env.URL, "http://")
	if did["id"] != "did:web:"+strings.Replace(host, ":", "%3A", 1) || !strings.Contains(fmt.Sprint(did["verificationMethod"]), h.Kid) {
		t.Fatalf("svc's DID document %v does not name the card's key %s", did, h.Kid)
	}

	client, err := a2aclient.NewFromCard(ctx, card)
	if err != nil {
		t.Fatalf("client from svc's card: %v", err)
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("Hello through svc's card"))
	msg.Metadata = map[string]any{"from_hash": alice, "to_hash": bob}
	res, err := client.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	ack, ok := res.(*a2a.Message)
	if !ok || ack.ContextID == "" {
		t.Fatalf("send answered %#v", res)
	}
	got := env.Do(t, "GET", "/api/threads/"+ack.ContextID, bobKey, nil).Expect(t, 200).JSON(t)["messages"].([]any)[0].(map[string]any)
	if got["body"] != "Hello through svc's card" || got["from_hash"] != alice || got["to_hash"] != bob {
		t.Fatalf("bob's mailbox holds %v", got)
	}
	nobody := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("to whom?"))
	nobody.Metadata = map[string]any{"from_hash": alice}
	env.Do(t, "POST", "/a2a/message:send", "", map[string]any{"message": nobody}).ExpectError(t, 400, "MISSING_FIELD")
}
