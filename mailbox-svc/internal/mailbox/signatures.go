package mailbox

import (
	"context"
	"errors"
	"time"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/signing"
)

// Error codes of signed sends (docs/api.md, "Signed messages").
const (
	CodeInvalidSignature  = "INVALID_SIGNATURE"
	CodeSignatureExpired  = "SIGNATURE_EXPIRED"
	CodeSignatureReplayed = "SIGNATURE_REPLAYED"
	CodeSenderUnverified  = "SENDER_UNVERIFIED"
)

// Limits of a signature.
const (
	MaxJWS         = 1024
	MinNonce       = 16
	MaxNonce       = 128
	DefaultSkew    = 5 * time.Minute
	verifiedOnly   = "verified_only"
	nonceKeptExtra = time.Minute
)

// Signing is identity-svc as a signed send needs it: the sender's public keys (the trust root of
// from_hash) and a signature on the owner's behalf; *identity.Client satisfies it.
type Signing interface {
	SigningKeys(ctx context.Context, objectID string) (signing.KeySet, error)
	FreshSigningKeys(ctx context.Context, objectID string) (signing.KeySet, error)
	Sign(ctx context.Context, objectID string, payload []byte) (*identity.Signature, error)
}

// DraftSignature is a sender's own signature of a draft: a detached compact JWS over the
// canonical payload (signing.MessagePayload), the time it was made and the sender's nonce.
type DraftSignature struct {
	JWS      string
	SignedAt string
	Nonce    string
}

// validate checks the signature's shape; whether it verifies is verify's to find out.
func (d *DraftSignature) validate() error {
	switch {
	case d.JWS == "" || len(d.JWS) > MaxJWS:
		return apierr.BadRequest(CodeInvalidSignature, "signature must be a detached compact JWS of at most %d characters", MaxJWS)
	case len(d.Nonce) < MinNonce || len(d.Nonce) > MaxNonce || !ValidIdempotencyKey(d.Nonce):
		return apierr.BadRequest(apierr.CodeInvalidRequest, "nonce must be %d to %d visible ASCII characters", MinNonce, MaxNonce)
	}
	if _, err := time.Parse(time.RFC3339Nano, d.SignedAt); err != nil {
		return apierr.BadRequest(apierr.CodeInvalidRequest, "signed_at must be an RFC 3339 date-time")
	}
	return nil
}

// payload is what the draft's signature covers.
func payload(d Draft, signedAt, nonce string) ([]byte, error) {
	return signing.MessagePayload{FromHash: d.FromHash, ToHash: d.ToHash, Kind: d.Kind, Body: d.Body, SignedAt: signedAt, Nonce: nonce,
		ThreadID: signedThread(d.ThreadID)}.Bytes()
}

// signedThread is the thread_id a payload signed: nil for a send that opens its thread.
func signedThread(threadID string) *string {
	if threadID == "" {
		return nil
	}
	return &threadID
}

// verify checks the sender's own signature of d against the sender's key set at identity-svc
// (never a key or URL the message names) and records its nonce, so that it is accepted once. It
// returns the signature to store with the message.
func (s *Sender) verify(ctx context.Context, d Draft, from *identity.Object) (*store.Signature, error) {
	sig := d.Signature
	signedAt, _ := time.Parse(time.RFC3339Nano, sig.SignedAt)
	now := clock.Now()
	skew := s.skew()
	if signedAt.Before(now.Add(-skew)) || signedAt.After(now.Add(skew)) {
		return nil, apierr.BadRequest(CodeSignatureExpired, "signed_at is more than %s away from the server's time; sign again", skew)
	}
	raw, err := payload(d, sig.SignedAt, sig.Nonce)
	if err != nil {
		return nil, err
	}
	keys, err := s.Signing.SigningKeys(ctx, from.ObjectID)
	if err != nil {
		return nil, apierr.Unavailable(err)
	}
	key, err := signing.Verify(sig.JWS, raw, keys)
	if errors.Is(err, signing.ErrUnknownKID) {
		// The cached set may predate a key registered a moment ago: ask identity-svc once more.
		if keys, err = s.Signing.FreshSigningKeys(ctx, from.ObjectID); err != nil {
			return nil, apierr.Unavailable(err)
		}
		key, err = signing.Verify(sig.JWS, raw, keys)
	}
	switch {
	case errors.Is(err, signing.ErrUnknownKID):
		return nil, apierr.BadRequest(CodeInvalidSignature, "the signature's kid is not a signing key of from_hash (see its jwks.json)")
	case errors.Is(err, signing.ErrBadSignature):
		return nil, apierr.BadRequest(CodeInvalidSignature, "the signature does not verify over this message, signed_at and nonce")
	case err != nil:
		return nil, apierr.BadRequest(CodeInvalidSignature, "signature: %s", err)
	case key.RotatedAt != nil && signedAt.After(*key.RotatedAt):
		return nil, apierr.BadRequest(CodeInvalidSignature, "the signature's kid was rotated away before signed_at")
	}
	fresh, err := s.Store.ClaimNonce(ctx, from.ObjectID, sig.Nonce, signedAt.Add(skew+nonceKeptExtra))
	if err != nil {
		return nil, err
	}
	if !fresh {
		return nil, apierr.Conflict(CodeSignatureReplayed, "this nonce was already used by the sender; a signature is accepted once")
	}
	return &store.Signature{JWS: sig.JWS, KID: key.KID, SignedAt: sig.SignedAt, Nonce: sig.Nonce, ThreadID: signedThread(d.ThreadID)}, nil
}

// signsOnBehalf reports whether svc signs the send for its sender: the request carries the
// sender's own key, the owner key or a sub-key with the write scope.
func signsOnBehalf(caller *contract.Principal, from *identity.Object) bool {
	return caller != nil && caller.ObjectID == from.ObjectID && caller.HasScope(contract.ScopeWrite)
}

// signFor has identity-svc sign the message for its sender, with the message id as nonce. A
// sender whose owner holds the active key, or an identity-svc that does not answer, leaves the
// message unverified: the send itself does not depend on it. The nonce is claimed as a sender's
// own is, so that the signature, which anyone may read with the message, cannot be sent again as a
// new verified message.
func (s *Sender) signFor(ctx context.Context, d Draft, from *identity.Object, messageID string) *store.Signature {
	if s.Signing == nil {
		return nil
	}
	now := clock.Now()
	if fresh, err := s.Store.ClaimNonce(ctx, from.ObjectID, messageID, now.Add(s.skew()+nonceKeptExtra)); err != nil || !fresh {
		return nil
	}
	signedAt := clock.Format(now)
	raw, err := payload(d, signedAt, messageID)
	if err != nil {
		return nil
	}
	out, err := s.Signing.Sign(ctx, from.ObjectID, raw)
	if err != nil {
		if !errors.Is(err, identity.ErrOwnerHeldKey) {
			s.Log.WarnContext(ctx, "signing a send on its owner's behalf failed; it stays unverified", "error", err)
		}
		return nil
	}
	return &store.Signature{JWS: out.JWS, KID: out.KID, SignedAt: signedAt, Nonce: messageID, ThreadID: signedThread(d.ThreadID)}
}

func (s *Sender) skew() time.Duration {
	if s.SignatureSkew > 0 {
		return s.SignatureSkew
	}
	return DefaultSkew
}
