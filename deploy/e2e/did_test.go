package e2e

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/svcdev/svc/pkg/client"
	"github.com/svcdev/svc/pkg/httpsig"
)

// didDoc is the part of a DID document the tests read, decoded as a resolver would.
type didDoc struct {
	Context            []string `json:"@context"`
	ID                 string   `json:"id"`
	AlsoKnownAs        []string `json:"alsoKnownAs"`
	VerificationMethod []struct {
		ID           string          `json:"id"`
		Type         string          `json:"type"`
		Controller   string          `json:"controller"`
		PublicKeyJWK jose.JSONWebKey `json:"publicKeyJwk"`
	} `json:"verificationMethod"`
	Authentication  []string `json:"authentication"`
	AssertionMethod []string `json:"assertionMethod"`
	Service         []struct {
		ID              string `json:"id"`
		Type            string `json:"type"`
		ServiceEndpoint string `json:"serviceEndpoint"`
	} `json:"service"`
}

// didURL is where the did:web method resolves did (did:web spec, "Read (Resolve)"): colons to
// slashes, the percent-encoded port decoded, /did.json appended, over HTTPS.
func didURL(did string) string {
	parts := strings.Split(strings.TrimPrefix(did, "did:web:"), ":")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(p, "%3A", ":")
	}
	return "https://" + strings.Join(parts, "/") + "/did.json"
}

// TestObjectsAreDIDWebDIDs: an object's did.json is the document its did:web DID resolves to:
// its id names the route it is served at, its verification methods are jwks.json's keys by kid,
// a signature made before a key rotation still verifies with the key the document keeps, only
// the active key authenticates, a hash the object had before a custom hash keeps resolving, and
// a private object has no public DID.
func TestObjectsAreDIDWebDIDs(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, nil)
	oldPriv, oldKID := registerOwnerKey(t, env, hash, key)
	payload := []byte(`{"statement":"made before the rotation"}`)
	oldSig := detachedJWS(t, oldPriv, oldKID, payload)
	_, newKID := registerOwnerKey(t, env, hash, key)

	read := func(h string) didDoc {
		t.Helper()
		r := env.Do(t, "GET", "/api/objects/"+h+"/did.json", "", nil).Expect(t, 200)
		if ct := r.Header.Get("Content-Type"); ct != "application/did+ld+json" {
			t.Fatalf("did.json Content-Type %q", ct)
		}
		var d didDoc
		r.Decode(t, &d)
		return d
	}
	doc := read(hash)
	// The services' BASE_URL is the gateway's URL, http://127.0.0.1:<port>.
	host := strings.TrimPrefix(env.URL, "http://")
	if want := "did:web:" + strings.Replace(host, ":", "%3A", 1) + ":api:objects:" + hash; doc.ID != want {
		t.Fatalf("id %q, want %q", doc.ID, want)
	}
	if got, want := didURL(doc.ID), "https://"+host+"/api/objects/"+hash+"/did.json"; got != want {
		t.Fatalf("the DID resolves to %s, want %s", got, want)
	}
	if !slices.Contains(doc.Context, "https://www.w3.org/ns/did/v1") {
		t.Errorf("@context %v lacks DID Core's", doc.Context)
	}
	set, _ := jwksOf(t, env, hash)
	if len(doc.VerificationMethod) != len(set.Keys) {
		t.Fatalf("%d verification methods for %d keys in jwks.json", len(doc.VerificationMethod), len(set.Keys))
	}
	for _, vm := range doc.VerificationMethod {
		kid := strings.TrimPrefix(vm.ID, doc.ID+"#")
		keys := set.Key(kid)
		if len(keys) != 1 || vm.Type != "JsonWebKey2020" || vm.Controller != doc.ID {
			t.Fatalf("verification method %s (%s, controller %s) is not one key of jwks.json", vm.ID, vm.Type, vm.Controller)
		}
		if !bytes.Equal(keys[0].Key.(ed25519.PublicKey), vm.PublicKeyJWK.Key.(ed25519.PublicKey)) {
			t.Errorf("verification method %s holds another key than jwks.json's %s", vm.ID, kid)
		}
	}
	if want := []string{doc.ID + "#" + newKID}; !slices.Equal(doc.Authentication, want) || !slices.Equal(doc.AssertionMethod, want) {
		t.Errorf("authentication %v, assertionMethod %v: want only the active key %v", doc.Authentication, doc.AssertionMethod, want)
	}
	// A verifier holding only the DID document checks the old signature by its kid.
	jws, err := jose.ParseDetached(oldSig, payload, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		t.Fatal(err)
	}
	var verified bool
	for _, vm := range doc.VerificationMethod {
		if vm.ID == doc.ID+"#"+jws.Signatures[0].Header.KeyID {
			_, err := jws.Verify(vm.PublicKeyJWK.Key)
			verified = err == nil
		}
	}
	if !verified {
		t.Fatal("a signature made before the rotation does not verify with the DID document's keys")
	}
	services := map[string]string{}
	for _, s := range doc.Service {
		services[s.Type] = s.ServiceEndpoint
	}
	for typ, suffix := range map[string]string{"A2AAgentCard": "/api/objects/" + hash + "/agent-card.json", "MCPServer": "/mcp",
		"LLMsTxt": "/api/objects/" + hash + "/llm.txt", "JsonWebKeySet": "/api/objects/" + hash + "/jwks.json"} {
		if !strings.HasSuffix(services[typ], suffix) {
			t.Errorf("service %s is %q, want …%s", typ, services[typ], suffix)
		}
	}

	// After a custom hash, both DIDs resolve, each naming the other.
	username := fmt.Sprintf("didweb%d", time.Now().UnixNano()%1_000_000_000)
	env.Do(t, "POST", "/api/objects/claim-custom-hash", key, map[string]any{"username": username, "payment_reference": issueVoucher()}).Expect(t, 200)
	custom := "svc_" + username
	before, after := read(hash), read(custom)
	if !strings.HasSuffix(before.ID, ":"+hash) || !strings.HasSuffix(after.ID, ":"+custom) {
		t.Fatalf("ids %s and %s do not name the hashes asked for", before.ID, after.ID)
	}
	if !slices.Contains(before.AlsoKnownAs, after.ID) || !slices.Contains(after.AlsoKnownAs, before.ID) {
		t.Errorf("alsoKnownAs %v and %v do not name each other's DID", before.AlsoKnownAs, after.AlsoKnownAs)
	}
	if !slices.Contains(after.AlsoKnownAs, env.URL+"/"+custom) {
		t.Errorf("alsoKnownAs %v lacks the box page", after.AlsoKnownAs)
	}

	// A private object has no public DID: 404 for a resolver (which has no key) and any other key.
	private, privateKey := env.CreateObject(t, map[string]any{"visibility": "private"})
	env.Do(t, "GET", "/api/objects/"+private+"/did.json", "", nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "GET", "/api/objects/"+private+"/did.json", key, nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "GET", "/api/objects/"+private+"/did.json", privateKey, nil).Expect(t, 200) // its own, as every public read
	env.Do(t, "GET", "/api/objects/svc_nosuchobject/did.json", "", nil).ExpectError(t, 404, "NOT_FOUND")
}

// TestWebFingerFindsAnObject: WebFinger (RFC 7033) answers acct:<hash>@<host>, acct:<username>@<host>
// for a custom hash, the object's DID and its box page with one JRD whose links lead to the box
// page, the DID document, the card, the keys and llm.txt; rel filters the links; any origin may
// read it; a missing resource is 400, and an unknown, private or other host's resource 404.
func TestWebFingerFindsAnObject(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, nil)
	username := fmt.Sprintf("finger%d", time.Now().UnixNano()%1_000_000_000)
	env.Do(t, "POST", "/api/objects/claim-custom-hash", key, map[string]any{"username": username, "payment_reference": issueVoucher()}).Expect(t, 200)
	custom := "svc_" + username
	host := strings.TrimPrefix(env.URL, "http://")
	finger := func(resource string, rels ...string) *Response {
		q := url.Values{"resource": {resource}}
		for _, r := range rels {
			q.Add("rel", r)
		}
		return env.Do(t, "GET", "/.well-known/webfinger?"+q.Encode(), "", nil)
	}
	did := Str(t, env.Do(t, "GET", "/api/objects/"+custom+"/did.json", "", nil).Expect(t, 200).JSON(t), "id")
	for _, resource := range []string{"acct:" + custom + "@" + host, "acct:" + username + "@" + host, did, env.URL + "/" + custom} {
		r := finger(resource).Expect(t, 200)
		if ct := r.Header.Get("Content-Type"); ct != "application/jrd+json" || r.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("%s: Content-Type %q, Access-Control-Allow-Origin %q", resource, ct, r.Header.Get("Access-Control-Allow-Origin"))
		}
		var jrd struct {
			Subject string   `json:"subject"`
			Aliases []string `json:"aliases"`
			Links   []struct {
				Rel, Type, Href string
			} `json:"links"`
		}
		r.Decode(t, &jrd)
		if jrd.Subject != resource || !slices.Contains(jrd.Aliases, did) {
			t.Errorf("%s: subject %q, aliases %v", resource, jrd.Subject, jrd.Aliases)
		}
		hrefs := map[string]string{}
		for _, l := range jrd.Links {
			if l.Rel == "" || l.Href == "" {
				t.Errorf("%s: a link without rel or href: %+v", resource, l)
			}
			hrefs[l.Type] = l.Href
		}
		for typ, suffix := range map[string]string{"text/html": "/" + custom, "application/did+ld+json": "/did.json",
			"application/json": "/agent-card.json", "application/jwk-set+json": "/jwks.json", "text/markdown": "/llm.txt"} {
			if !strings.HasSuffix(hrefs[typ], suffix) {
				t.Errorf("%s: the %s link is %q", resource, typ, hrefs[typ])
			}
		}
		// Every link leads somewhere that answers.
		for _, href := range hrefs {
			env.Do(t, "GET", strings.TrimPrefix(href, env.URL), "", nil).Expect(t, 200)
		}
	}
	// The previous hash is found too, under its own subject.
	finger("acct:"+hash+"@"+host).Expect(t, 200)
	var only struct {
		Links []map[string]any `json:"links"`
	}
	finger("acct:"+custom+"@"+host, "http://webfinger.net/rel/profile-page").Expect(t, 200).Decode(t, &only)
	if len(only.Links) != 1 || only.Links[0]["rel"] != "http://webfinger.net/rel/profile-page" {
		t.Errorf("rel=profile-page kept %v", only.Links)
	}

	env.Do(t, "GET", "/.well-known/webfinger", "", nil).ExpectError(t, 400, "MISSING_FIELD")
	finger("acct:"+custom+"@elsewhere.example").ExpectError(t, 404, "NOT_FOUND")
	finger("acct:svc_nosuchobject@"+host).ExpectError(t, 404, "NOT_FOUND")
	finger("mailto:someone@"+host).ExpectError(t, 404, "NOT_FOUND")
	private, _ := env.CreateObject(t, map[string]any{"visibility": "private"})
	finger("acct:"+private+"@"+host).ExpectError(t, 404, "NOT_FOUND")
}

// TestMCPServerCardMatchesServerJSON: the server card at /.well-known/mcp/server-card.json says
// what the repository's server.json tells the MCP Registry, with the remote at this deployment's
// /mcp, which answers an MCP initialize.
func TestMCPServerCardMatchesServerJSON(t *testing.T) {
	t.Parallel()
	env := Start(t)
	raw, err := os.ReadFile("../../server.json")
	if err != nil {
		t.Fatal(err)
	}
	var published, served map[string]any
	if err := json.Unmarshal(raw, &published); err != nil {
		t.Fatal(err)
	}
	env.Do(t, "GET", "/.well-known/mcp/server-card.json", "", nil).Expect(t, 200).Decode(t, &served)
	for _, field := range []string{"name", "title", "description", "version"} {
		if served[field] != published[field] {
			t.Errorf("%s: the card says %v, server.json %v", field, served[field], published[field])
		}
	}
	if s, _ := served["$schema"].(string); !strings.HasPrefix(s, "https://static.modelcontextprotocol.io/schemas/") {
		t.Errorf("$schema %q", s)
	}
	remote := served["remotes"].([]any)[0].(map[string]any)
	want := published["remotes"].([]any)[0].(map[string]any)
	if remote["type"] != want["type"] || remote["url"] != env.URL+"/mcp" {
		t.Errorf("remote %v, want %v at %s/mcp", remote, want["type"], env.URL)
	}
	if got, want := fmt.Sprint(remote["headers"]), fmt.Sprint(want["headers"]); got != want {
		t.Errorf("headers %s, server.json %s", got, want)
	}
	init := env.send(t, Request{Method: "POST", Path: strings.TrimPrefix(remote["url"].(string), env.URL),
		Headers: map[string]string{"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"},
		Body: map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
			"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "card-check", "version": "1"}}}})
	init.Expect(t, 200)
	if !strings.Contains(string(init.Body), `"serverInfo"`) {
		t.Errorf("the card's remote did not answer initialize: %s", init.Body)
	}
}

// TestSignedRequestsVerifyTheSender: a send signed with HTTP Message Signatures (Web Bot Auth
// profile) by the sender's own key, with no API key, is stored sender_verified; a copy of the
// request, a changed body, another sender's from_hash, a signature made for another authority and
// an expired one are refused. The key directory its Signature-Agent names lists the active key.
func TestSignedRequestsVerifyTheSender(t *testing.T) {
	t.Parallel()
	env := Start(t)
	alice, aliceKey := env.CreateObject(t, nil)
	bob, _ := env.CreateObject(t, nil)
	carol, _ := env.CreateObject(t, nil)
	key, err := client.New(env.URL, aliceKey).NewSigningKey(context.Background(), alice)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := key.RequestSigner(env.URL)
	if err != nil {
		t.Fatal(err)
	}
	type sent struct {
		status int
		body   map[string]any
	}
	do := func(h http.Header, body []byte) sent {
		t.Helper()
		req, _ := http.NewRequest("POST", env.URL+"/api/messages", bytes.NewReader(body))
		req.Header = h.Clone()
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(res.Body).Decode(&out)
		return sent{res.StatusCode, out}
	}
	signed := func(s httpsig.Signer, body []byte, now time.Time, url string) http.Header {
		t.Helper()
		req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
		if err := s.Sign(req, body, now, time.Minute); err != nil {
			t.Fatal(err)
		}
		return req.Header
	}
	code := func(s sent) any {
		if e, ok := s.body["error"].(map[string]any); ok {
			return e["code"]
		}
		return nil
	}
	body := []byte(`{"from_hash":"` + alice + `","to_hash":"` + bob + `","kind":"note","body":"signed by request"}`)
	h := signed(signer, body, time.Now(), env.URL+"/api/messages")
	first := do(h, body)
	if first.status != 201 || first.body["sender_verified"] != true || first.body["kid"] != key.KID || first.body["signature"] != nil {
		t.Fatalf("a signed request: %d %v", first.status, first.body)
	}
	if again := do(h, body); again.status != 409 || code(again) != "SIGNATURE_REPLAYED" {
		t.Errorf("the same request again: %d %v", again.status, again.body)
	}
	changed := []byte(strings.Replace(string(body), "signed by request", "changed on the way", 1))
	if r := do(signed(signer, body, time.Now(), env.URL+"/api/messages"), changed); r.status != 400 || code(r) != "INVALID_SIGNATURE" {
		t.Errorf("a changed body: %d %v", r.status, r.body)
	}
	asCarol := []byte(strings.Replace(string(body), alice, carol, 1))
	if r := do(signed(signer, asCarol, time.Now(), env.URL+"/api/messages"), asCarol); r.status != 400 || code(r) != "INVALID_SIGNATURE" {
		t.Errorf("alice's signature on carol's from_hash: %d %v", r.status, r.body)
	}
	if r := do(signed(signer, body, time.Now(), "https://elsewhere.example/api/messages"), body); r.status != 400 || code(r) != "INVALID_SIGNATURE" {
		t.Errorf("a signature made for another authority: %d %v", r.status, r.body)
	}
	if r := do(signed(signer, body, time.Now().Add(-3*time.Minute), env.URL+"/api/messages"), body); r.status != 400 || code(r) != "SIGNATURE_EXPIRED" {
		t.Errorf("an expired signature: %d %v", r.status, r.body)
	}
	thread := env.Do(t, "GET", "/api/threads/"+first.body["thread_id"].(string), aliceKey, nil).Expect(t, 200).JSON(t)
	if msgs := thread["messages"].([]any); len(msgs) != 1 || msgs[0].(map[string]any)["sender_verified"] != true {
		t.Errorf("the thread holds %v", msgs)
	}

	dir := env.Do(t, "GET", strings.TrimPrefix(client.DirectoryURL(env.URL, alice), env.URL), "", nil).Expect(t, 200)
	if ct := dir.Header.Get("Content-Type"); ct != httpsig.DirectoryContentType {
		t.Errorf("directory Content-Type %q", ct)
	}
	var d struct {
		Keys []map[string]any `json:"keys"`
	}
	dir.Decode(t, &d)
	if len(d.Keys) != 1 || d.Keys[0]["kid"] != key.KID {
		t.Errorf("alice's directory lists %v, want her active key %s", d.Keys, key.KID)
	}
	if dir.Header.Get("Signature") != "" {
		t.Error("a directory whose owner holds the key is signed by svc")
	}
	// bob's key is held by svc: his directory's answer is signed, for svc's authority.
	bobDir := env.Do(t, "GET", strings.TrimPrefix(client.DirectoryURL(env.URL, bob), env.URL), "", nil).Expect(t, 200)
	if in := bobDir.Header.Get("Signature-Input"); !strings.Contains(in, `("@authority";req)`) || !strings.Contains(in, `tag="http-message-signatures-directory"`) {
		t.Errorf("bob's directory Signature-Input %q", in)
	}
}

// TestOutboundRequestsAreSignedBySvc: a webhook delivery carries svc's own HTTP message signature
// (Web Bot Auth profile), whose Signature-Agent is svc's key directory; the delivery verifies with
// the key that directory lists, for the receiver's authority and the delivered body, and the
// directory's answer is signed for svc's host.
func TestOutboundRequestsAreSignedBySvc(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t)
	env := webhookEnv(t, rcv)
	hash, key := env.CreateObject(t, nil)
	sender, _ := env.CreateObject(t, nil)
	env.Do(t, "POST", "/api/objects/"+hash+"/webhooks", key, map[string]any{"callback_url": rcv.URL("/hook")}).Expect(t, 201)
	sendMessage(t, env, sender, hash, "", "signed delivery")
	got := rcv.waitFor(t, env, 1)[0]

	dirRes := env.Do(t, "GET", "/.well-known/http-message-signatures-directory", "", nil).Expect(t, 200)
	if in := dirRes.Header.Get("Signature-Input"); !strings.Contains(in, `tag="http-message-signatures-directory"`) || dirRes.Header.Get("Signature") == "" {
		t.Errorf("the directory's answer is not signed: Signature-Input %q", in)
	}
	var dir struct {
		Keys []jose.JSONWebKey `json:"keys"`
	}
	dirRes.Decode(t, &dir)
	if len(dir.Keys) != 1 {
		t.Fatalf("svc's directory lists %d keys", len(dir.Keys))
	}
	u, _ := url.Parse(rcv.URL(got.Path))
	req := &http.Request{Method: "POST", URL: u, Host: u.Host, Header: got.Header}
	v, err := httpsig.Verify(req, got.Body, time.Now(), func(keyID, agent string) (ed25519.PublicKey, error) {
		if agent != env.URL+"/.well-known/http-message-signatures-directory" || keyID != dir.Keys[0].KeyID {
			return nil, fmt.Errorf("keyid %s of %s is not the directory's %s", keyID, agent, dir.Keys[0].KeyID)
		}
		return dir.Keys[0].Key.(ed25519.PublicKey), nil
	})
	if err != nil {
		t.Fatalf("the delivery's signature: %v (headers %v)", err, got.Header)
	}
	if _, err := httpsig.Verify(req, append(got.Body, ' '), time.Now(), func(string, string) (ed25519.PublicKey, error) {
		return dir.Keys[0].Key.(ed25519.PublicKey), nil
	}); err == nil {
		t.Error("the delivery's signature verifies over another body")
	}
	t.Logf("delivery signed by %s, valid until %s", v.KeyID, v.Expires)
}
