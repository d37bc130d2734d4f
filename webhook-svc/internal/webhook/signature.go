package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/svcdev/svc/webhook-svc/internal/store"
)

// SecretPrefix starts every signing secret (Standard Webhooks).
const SecretPrefix = "whsec_"

// NewSecret returns a fresh signing secret: whsec_ and 32 random bytes in base64.
func NewSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand does not fail
	return SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// Sign returns the webhook-signature header value of a message: one "v1,<base64 HMAC-SHA256 of
// id.timestamp.body>" per secret, space-separated, keyed by the secret's base64 part.
func Sign(secrets []string, id string, at time.Time, body []byte) string {
	signed := id + "." + strconv.FormatInt(at.Unix(), 10) + "."
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, SecretPrefix))
		if err != nil {
			continue // secrets are made by NewSecret; a malformed one signs nothing
		}
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(signed))
		mac.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
	}
	return strings.Join(sigs, " ")
}

// signingSecrets are the secrets that still sign at now: the current one and any rotated away
// less than the overlap ago.
func signingSecrets(secrets []store.Secret, now time.Time) []string {
	var out []string
	for _, s := range secrets {
		if s.ExpiresAt == nil || now.Before(*s.ExpiresAt) {
			out = append(out, s.Value)
		}
	}
	return out
}
