package e2e

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
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

	// A private object has no public DID, not even for its owner's key (a resolver has none).
	private, privateKey := env.CreateObject(t, map[string]any{"visibility": "private"})
	env.Do(t, "GET", "/api/objects/"+private+"/did.json", "", nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "GET", "/api/objects/"+private+"/did.json", privateKey, nil).ExpectError(t, 404, "NOT_FOUND")
	env.Do(t, "GET", "/api/objects/svc_nosuchobject/did.json", "", nil).ExpectError(t, 404, "NOT_FOUND")
}
