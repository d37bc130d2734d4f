package mailbox

import (
	"context"
	"crypto/ed25519"
	"errors"
	"net/http"
	"net/url"

	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/httpsig"
	"github.com/svcdev/svc/pkg/identity"
)

// SignedRequest is a send request signed with HTTP Message Signatures (RFC 9421, Web Bot Auth
// profile) as its sender: the request as it came and its body.
type SignedRequest struct {
	Request *http.Request
	Body    []byte
}

// verifyRequest checks the HTTP message signature of a send as its sender's: made for svc's own
// authority (BaseURL's host) with the sender's active key, found by its kid in the sender's key
// set at identity-svc, naming the sender's key directory as Signature-Agent, covering the body;
// its nonce is claimed, so that a copy of the request is refused. The message is then the
// sender's, verified, with no JWS to show: a request signature covers a request, not a message.
func (s *Sender) verifyRequest(ctx context.Context, d Draft, from *identity.Object) (*store.Signature, error) {
	base, err := url.Parse(s.BaseURL)
	if err != nil || base.Host == "" {
		return nil, apierr.BadRequest(CodeInvalidSignature, "this deployment does not verify request signatures")
	}
	req := d.HTTPSignature.Request.Clone(ctx)
	req.Host, req.URL.Scheme = base.Host, base.Scheme
	var kid string
	v, err := httpsig.Verify(req, d.HTTPSignature.Body, clock.Now(), func(keyID, agent string) (ed25519.PublicKey, error) {
		if agent != httpsig.ObjectDirectoryURL(s.BaseURL, d.FromHash) && agent != httpsig.ObjectDirectoryURL(s.BaseURL, from.Hash) {
			return nil, apierr.BadRequest(CodeInvalidSignature, "Signature-Agent must name the key directory of from_hash")
		}
		keys, err := s.Signing.FreshSigningKeys(ctx, from.ObjectID)
		if err != nil {
			return nil, apierr.Unavailable(err)
		}
		active := keys.Active()
		if active == nil || active.KID != keyID {
			return nil, apierr.BadRequest(CodeInvalidSignature, "keyid is not the active signing key of from_hash (see its jwks.json)")
		}
		kid = keyID
		return active.PublicKey()
	})
	var ae *apierr.Error
	switch {
	case errors.As(err, &ae):
		return nil, err
	case errors.Is(err, httpsig.ErrExpired):
		return nil, apierr.BadRequest(CodeSignatureExpired, "the request signature is expired or not yet valid; sign again")
	case err != nil:
		return nil, apierr.BadRequest(CodeInvalidSignature, "request signature: %s", err)
	}
	fresh, err := s.Store.ClaimNonce(ctx, from.ObjectID, "httpsig:"+v.Nonce, v.Expires.Add(nonceKeptExtra))
	if err != nil {
		return nil, err
	}
	if !fresh {
		return nil, apierr.Conflict(CodeSignatureReplayed, "this request signature was already used; a signature is accepted once")
	}
	return &store.Signature{KID: kid, SignedAt: clock.Format(v.Created.UTC()), Nonce: v.Nonce, Via: store.ViaHTTPSignature}, nil
}
