// Package payment verifies payment references for custom hashes. The default verifier accepts
// operator-issued vouchers: svcpay_<id>_<signature>, where the signature is the base64url
// HMAC-SHA256 of the id under a secret the operator configures. Single use is enforced by the
// caller, which records the voucher id.
package payment

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
)

// Prefix of a voucher.
const Prefix = "svcpay_"

// ErrInvalid says that a payment reference is not a valid voucher.
var ErrInvalid = errors.New("payment reference is not valid")

// Verifier checks a payment reference and returns the id under which its single use is recorded.
type Verifier interface {
	Verify(reference string) (id string, err error)
}

// Vouchers is the default Verifier.
type Vouchers struct{ secret []byte }

// NewVouchers returns a voucher verifier for secret; with an empty secret every reference is refused.
func NewVouchers(secret string) *Vouchers { return &Vouchers{secret: []byte(secret)} }

// Issue makes a new voucher.
func (v *Vouchers) Issue() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	return Prefix + id + "_" + v.sign(id)
}

// Verify implements Verifier.
func (v *Vouchers) Verify(ref string) (string, error) {
	if len(v.secret) == 0 {
		return "", ErrInvalid
	}
	rest, ok := strings.CutPrefix(ref, Prefix)
	if !ok {
		return "", ErrInvalid
	}
	id, sig, ok := strings.Cut(rest, "_")
	if !ok || id == "" || !hmac.Equal([]byte(sig), []byte(v.sign(id))) {
		return "", ErrInvalid
	}
	return id, nil
}

func (v *Vouchers) sign(id string) string {
	m := hmac.New(sha256.New, v.secret)
	m.Write([]byte(id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
