package e2e

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
)

// issueVoucher signs a voucher as an operator would with svc-voucher.
func issueVoucher() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	m := hmac.New(sha256.New, []byte(VoucherSecret))
	m.Write([]byte(id))
	return "svcpay_" + id + "_" + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
