package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/mailbox-svc/internal/mailbox"
	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/httpsig"
	"github.com/svcdev/svc/pkg/httpx"
)

// Headers of idempotent sends.
const (
	HeaderIdempotencyKey = "Idempotency-Key"
	HeaderReplayed       = "Idempotent-Replayed"
)

type sendRequest struct {
	FromHash *string `json:"from_hash" required:"true"`
	ToHash   *string `json:"to_hash" required:"true"`
	Kind     *string `json:"kind" required:"true"`
	Body     *string `json:"body" required:"true"`
	ThreadID *string `json:"thread_id"`
	// Signature, SignedAt and Nonce are the sender's own signature of the message (all or none).
	Signature *string `json:"signature"`
	SignedAt  *string `json:"signed_at"`
	Nonce     *string `json:"nonce"`
}

// signedFields are what a message read shows of its sender's signature.
type signedFields struct {
	SenderVerified bool             `json:"sender_verified"`
	KID            *string          `json:"kid"`
	Signature      *signatureFields `json:"signature"`
}

// signatureFields let anyone check the signature: the JWS and what it signed besides the message.
type signatureFields struct {
	JWS      string  `json:"jws"`
	SignedAt string  `json:"signed_at"`
	Nonce    string  `json:"nonce"`
	ThreadID *string `json:"thread_id"`
}

func signed(sig *store.Signature) signedFields {
	if sig == nil {
		return signedFields{}
	}
	kid := sig.KID
	if sig.Via == store.ViaHTTPSignature {
		return signedFields{SenderVerified: true, KID: &kid} // the request was signed, not the message
	}
	return signedFields{SenderVerified: true, KID: &kid,
		Signature: &signatureFields{JWS: sig.JWS, SignedAt: sig.SignedAt, Nonce: sig.Nonce, ThreadID: sig.ThreadID}}
}

// draft reads a send request into the use case's draft.
func (r sendRequest) draft(c *gin.Context) (mailbox.Draft, error) {
	d := mailbox.Draft{FromHash: *r.FromHash, ToHash: *r.ToHash, Kind: *r.Kind, Body: *r.Body, Caller: authn.PrincipalFrom(c),
		Client: authn.ClaimsFrom(c).Client}
	if r.ThreadID != nil {
		d.ThreadID = *r.ThreadID
	}
	switch {
	case r.Signature == nil && r.SignedAt == nil && r.Nonce == nil:
	case r.Signature != nil && r.SignedAt != nil && r.Nonce != nil:
		d.Signature = &mailbox.DraftSignature{JWS: *r.Signature, SignedAt: *r.SignedAt, Nonce: *r.Nonce}
	default:
		return d, httpx.BadRequest(httpx.CodeInvalidRequest, "signature, signed_at and nonce go together: send all three or none")
	}
	return d, nil
}

type messageResponse struct {
	ID        string `json:"id"`
	ThreadID  string `json:"thread_id"`
	FromHash  string `json:"from_hash"`
	ToHash    string `json:"to_hash"`
	Kind      string `json:"kind"`
	Body      string `json:"body"`
	CreatedAt string `json:"created_at"`
	signedFields
}

func (h *Handler) sendMessage(c *gin.Context) error {
	signedRequest, err := requestSignature(c)
	if err != nil {
		return err
	}
	var req sendRequest
	if err := httpx.Decode(c, &req); err != nil {
		return err
	}
	d, err := req.draft(c)
	if err != nil {
		return err
	}
	if d.Signature == nil {
		d.HTTPSignature = signedRequest
	}
	key, err := idempotencyKey(c)
	if err != nil {
		return err
	}
	s, err := h.Sender.Send(c.Request.Context(), httpx.RequestID(c), d, key)
	if err != nil {
		return err
	}
	if s.Replayed {
		c.Header(HeaderReplayed, "true")
	}
	m := s.Message
	c.JSON(http.StatusCreated, messageResponse{
		ID: m.ID, ThreadID: m.ThreadID, FromHash: s.FromHash, ToHash: s.ToHash, Kind: m.Kind, Body: m.Body,
		CreatedAt: clock.Format(m.CreatedAt), signedFields: signed(m.Signature),
	})
	return nil
}

// idempotencyKey returns the Idempotency-Key header, "" when absent.
func idempotencyKey(c *gin.Context) (string, error) {
	key, present := c.Request.Header[HeaderIdempotencyKey]
	if !present {
		return "", nil
	}
	if len(key) != 1 || !mailbox.ValidIdempotencyKey(key[0]) {
		return "", httpx.BadRequest(httpx.CodeInvalidRequest,
			"%s must be 1 to %d visible ASCII characters", HeaderIdempotencyKey, mailbox.MaxIdempotencyKey)
	}
	return key[0], nil
}

// requestSignature is the send request as its HTTP message signature needs it (the request and
// its body, read here and put back for decoding), or nil when it carries none.
func requestSignature(c *gin.Context) (*mailbox.SignedRequest, error) {
	if c.GetHeader(httpsig.HeaderSignatureInput) == "" {
		return nil, nil
	}
	body, err := httpx.ReadBody(c, httpx.MaxBodyBytes)
	if err != nil {
		return nil, err
	}
	return &mailbox.SignedRequest{Request: c.Request, Body: body}, nil
}
