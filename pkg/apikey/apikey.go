// Package apikey generates and checks the secrets and public identifiers of svc: owner keys
// (svc_sk_), sub-keys (ksvc_), object hashes (svc_) and resource ids.
//
// A key is prefix + 43 base62 characters of 32 random bytes + a 6-character base62 CRC-32 of what
// precedes it, so that a mistyped key is refused without a lookup. Only the SHA-256 digest of a key
// is ever stored.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"math/big"
	"regexp"
	"strings"
	"sync"

	"github.com/oklog/ulid/v2"
)

// Prefixes of the public contract.
const (
	OwnerPrefix = "svc_sk_"
	SubPrefix   = "ksvc_"
	HashPrefix  = "svc_"
)

const (
	alphabet    = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	bodyLen     = 43 // ceil(256 / log2(62))
	checksumLen = 6  // 62^6 > 2^32
)

// Generate returns a new key with the given prefix and its digest.
func Generate(prefix string) (key, digest string) {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	body := base62(new(big.Int).SetBytes(b[:]), bodyLen)
	key = prefix + body + checksum(prefix+body)
	return key, Digest(key)
}

// Valid reports whether key has a known prefix, the right shape and a matching checksum. It does
// no lookup: a valid key may still be unknown or revoked.
func Valid(key string) bool {
	rest, ok := strings.CutPrefix(key, OwnerPrefix)
	if !ok {
		rest, ok = strings.CutPrefix(key, SubPrefix)
	}
	if !ok || len(rest) != bodyLen+checksumLen || strings.Trim(rest, alphabet) != "" {
		return false
	}
	head := key[:len(key)-checksumLen]
	return checksum(head) == key[len(key)-checksumLen:]
}

// IsOwnerKey reports whether key is shaped as an owner key (not a sub-key).
func IsOwnerKey(key string) bool { return strings.HasPrefix(key, OwnerPrefix) }

// Digest is the hex SHA-256 of a key: the only form in which keys are stored or cached.
func Digest(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// DisplayPrefix is the part of a key that may be shown again after creation, to tell keys apart.
func DisplayPrefix(key string) string {
	if len(key) < len(OwnerPrefix)+4 {
		return ""
	}
	p := SubPrefix
	if IsOwnerKey(key) {
		p = OwnerPrefix
	}
	return key[:len(p)+4]
}

func checksum(s string) string {
	return base62(new(big.Int).SetUint64(uint64(crc32.ChecksumIEEE([]byte(s)))), checksumLen)
}

func base62(n *big.Int, width int) string {
	out := make([]byte, width)
	base := big.NewInt(62)
	mod := new(big.Int)
	for i := width - 1; i >= 0; i-- {
		n.DivMod(n, base, mod)
		out[i] = alphabet[mod.Int64()]
	}
	return string(out)
}

var hashEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// NewHash returns a generated object hash: svc_ + 20 lowercase base32 characters (100 bits).
func NewHash() string {
	var b [13]byte
	_, _ = rand.Read(b[:])
	return HashPrefix + hashEncoding.EncodeToString(b[:])[:20]
}

var (
	hashPattern     = regexp.MustCompile(`^svc_[a-z0-9_]{3,32}$`)
	usernamePattern = regexp.MustCompile(`^[a-z0-9_]{3,32}$`)
)

// ValidHash reports whether s is shaped as an object hash (generated or custom).
func ValidHash(s string) bool { return hashPattern.MatchString(s) }

// ValidUsername reports whether s may become a custom hash svc_<s>. Names starting with "sk_" are
// reserved, so that no hash can be mistaken for an owner key.
func ValidUsername(s string) bool {
	return usernamePattern.MatchString(s) && !strings.HasPrefix(s, "sk_")
}

// NewID returns a sortable resource id: prefix_ + a lowercase ULID from NewULID. Ids sort by
// creation time, so they serve as paging cursors.
func NewID(prefix string) string {
	return prefix + "_" + strings.ToLower(NewULID().String())
}

// ulids is the process's ULID source: ids made in one millisecond must still sort in order.
var ulids struct {
	sync.Mutex
	ms  uint64
	seq uint16
}

// NewULID returns a ULID whose 80 bits of entropy are a 16-bit sequence within the millisecond
// (so ids of one process sort in creation order) and 64 bits from crypto/rand. Ids are public,
// some are capabilities (context links): knowing one id tells nothing of the next, unlike
// ulid.Make, whose monotonic entropy makes the next id the previous plus a small math/rand step.
func NewULID() ulid.ULID {
	var entropy [10]byte
	_, _ = rand.Read(entropy[2:])
	ulids.Lock()
	ms := max(ulid.Now(), ulids.ms)
	if ms == ulids.ms {
		ulids.seq++
		if ulids.seq == 0 { // 65,536 ids in one millisecond: borrow the next one
			ms++
		}
	} else {
		ulids.seq = 0
	}
	ulids.ms = ms
	binary.BigEndian.PutUint16(entropy[:2], ulids.seq)
	ulids.Unlock()
	var id ulid.ULID
	_ = id.SetTime(ms)
	copy(id[6:], entropy[:])
	return id
}
