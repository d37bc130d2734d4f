package apikey

import (
	"strings"
	"testing"
)

func TestGeneratedKeysAreValidAndDistinct(t *testing.T) {
	t.Parallel()
	for _, prefix := range []string{OwnerPrefix, SubPrefix} {
		a, da := Generate(prefix)
		b, _ := Generate(prefix)
		if !strings.HasPrefix(a, prefix) || !Valid(a) || !Valid(b) {
			t.Fatalf("generated key %q is not valid", a)
		}
		if a == b {
			t.Fatal("two generated keys are equal")
		}
		if da != Digest(a) || len(da) != 64 {
			t.Fatalf("digest %q is not the SHA-256 of the key", da)
		}
	}
}

func TestValidRefusesMistypedKeys(t *testing.T) {
	t.Parallel()
	key, _ := Generate(OwnerPrefix)
	flipped := []byte(key)
	i := len(OwnerPrefix) + 5
	if flipped[i] == 'a' {
		flipped[i] = 'b'
	} else {
		flipped[i] = 'a'
	}
	cases := map[string]string{
		"empty":         "",
		"no prefix":     key[len(OwnerPrefix):],
		"other prefix":  "sk_live_" + key[len(OwnerPrefix):],
		"one char off":  string(flipped),
		"truncated":     key[:len(key)-1],
		"extended":      key + "0",
		"bad character": key[:10] + "!" + key[11:],
	}
	for name, k := range cases {
		if Valid(k) {
			t.Errorf("%s: Valid(%q) = true, want false", name, k)
		}
	}
}

func TestHashesAndUsernames(t *testing.T) {
	t.Parallel()
	h := NewHash()
	if !ValidHash(h) || len(h) != len(HashPrefix)+20 {
		t.Fatalf("NewHash() = %q, not a valid 20-character hash", h)
	}
	for name, want := range map[string]bool{
		"abc": true, "a_b_9": true, "ab": false, "ABC": false, "a-b": false,
		strings.Repeat("a", 32): true, strings.Repeat("a", 33): false, "sk_live": false,
	} {
		if got := ValidUsername(name); got != want {
			t.Errorf("ValidUsername(%q) = %v, want %v", name, got, want)
		}
	}
}
