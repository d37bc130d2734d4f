package signing

import "testing"

func TestDIDWebSpellsTheURLItResolvesTo(t *testing.T) {
	for _, c := range []struct{ base, path, want string }{
		{"http://127.0.0.1:8080", "/api/objects/svc_abc", "did:web:127.0.0.1%3A8080:api:objects:svc_abc"},
		{"https://svc.example", "/api/objects/svc_abc", "did:web:svc.example:api:objects:svc_abc"},
		{"https://example.com/svc/", "", "did:web:example.com:svc"},
		{"https://example.com", "", "did:web:example.com"},
	} {
		got, err := DIDWeb(c.base, c.path)
		if err != nil || got != c.want {
			t.Errorf("DIDWeb(%q, %q) = %q, %v; want %q", c.base, c.path, got, err, c.want)
		}
	}
	if _, err := DIDWeb("not a url", ""); err == nil {
		t.Error("a base URL without a host makes a DID")
	}
}

func TestDIDDocumentKeepsRotatedKeysAsVerificationMethodsOnly(t *testing.T) {
	keys := KeySet{Keys: []Key{{KID: "old", X: "eA"}, {KID: "new", X: "eB"}}}
	d := NewDIDDocument("did:web:h", keys, nil, nil)
	if len(d.VerificationMethod) != 2 || d.VerificationMethod[0].ID != "did:web:h#new" || d.VerificationMethod[1].ID != "did:web:h#old" {
		t.Fatalf("verification methods %+v: want new then old", d.VerificationMethod)
	}
	if len(d.Authentication) != 1 || d.Authentication[0] != "did:web:h#new" || len(d.AssertionMethod) != 1 || d.AssertionMethod[0] != "did:web:h#new" {
		t.Fatalf("authentication %v, assertionMethod %v: want the active key only", d.Authentication, d.AssertionMethod)
	}
}
