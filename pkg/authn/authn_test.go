package authn

import (
	"strings"
	"testing"
)

func TestMintAndVerify(t *testing.T) {
	t.Parallel()
	keys, err := ParseKeys(GenerateSeed())
	if err != nil {
		t.Fatal(err)
	}
	other, _ := ParseKeys(GenerateSeed())
	p := &Principal{ObjectID: "obj_1", KeyID: "key_1", Scopes: []string{ScopeRead}}
	tok, err := keys.Mint("gateway", "identity-svc", p, &Target{ObjectID: "obj_1"}, "req_1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := keys.Verify(tok, "identity-svc")
	if err != nil || c.Principal.ObjectID != "obj_1" || c.Target.ObjectID != "obj_1" || c.RequestID != "req_1" {
		t.Fatalf("verify: %+v, %v", c, err)
	}
	if _, err := keys.Verify(tok, "mailbox-svc"); err == nil {
		t.Error("a token for identity-svc verified for mailbox-svc")
	}
	if _, err := other.Verify(tok, "identity-svc"); err == nil {
		t.Error("a token verified under another key")
	}
	parts := strings.Split(tok, ".")
	if _, err := keys.Verify(parts[0]+"."+parts[1]+".", "identity-svc"); err == nil {
		t.Error("an unsigned token verified")
	}
	if !p.HasScope(ScopeRead) || p.HasScope(ScopeWrite) || !(&Principal{Owner: true}).HasScope(ScopeMailbox) {
		t.Error("HasScope: owner keys hold every scope, sub-keys only theirs")
	}
}

func TestParseKeysRefusesBadSeeds(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "not base64!", "c2hvcnQ="} {
		if _, err := ParseKeys(s); err == nil {
			t.Errorf("ParseKeys(%q) accepted a bad seed", s)
		}
	}
}
