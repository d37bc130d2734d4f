package apikey

import (
	"math/big"
	"strings"
	"testing"

	"github.com/oklog/ulid/v2"
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

// TestNewIDIsUnpredictable checks that ids made in one millisecond sort in creation order and
// that each is far from the previous: the entropy of consecutive ids never differs by less
// than 2^33, which a counter stepped by a small random increment would.
func TestNewIDIsUnpredictable(t *testing.T) {
	t.Parallel()
	next := func() ulid.ULID {
		id, err := ulid.ParseStrict(strings.ToUpper(strings.TrimPrefix(NewID("lnk"), "lnk_")))
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	prev := next()
	sameMillisecond := 0
	for range 20000 {
		id := next()
		if id.Compare(prev) <= 0 {
			t.Fatalf("id %s does not sort after %s", id, prev)
		}
		if id.Time() == prev.Time() {
			sameMillisecond++
			a, b := new(big.Int).SetBytes(prev[6:]), new(big.Int).SetBytes(id[6:])
			if d := new(big.Int).Sub(b, a); d.Cmp(new(big.Int).Lsh(big.NewInt(1), 33)) < 0 {
				t.Fatalf("id %s is %s past %s: predictable from it", id, d, prev)
			}
		}
		prev = id
	}
	if sameMillisecond == 0 {
		t.Fatal("no two ids were made in one millisecond")
	}
}
