package api

import (
	"encoding/json"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/identity-svc/internal/object"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/httpsig"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/signing"
)

// jwks serves an object's public signing keys (RFC 7517), the trust root of its signatures.
func (h *handlers) jwks(c *gin.Context) error {
	set, err := h.objects.JWKS(c.Request.Context(), c.Param("hash"), authn.PrincipalFrom(c).Viewer())
	return answer(c, "application/jwk-set+json", set, err)
}

// did serves the object's did:web document.
func (h *handlers) did(c *gin.Context) error {
	doc, err := h.objects.DID(c.Request.Context(), c.Param("hash"), authn.PrincipalFrom(c).Viewer())
	return answer(c, signing.DIDContentType, doc, err)
}

type signingKeyRequest struct {
	JWK json.RawMessage `json:"jwk"`
}

type signingKeyResponse struct {
	KID       string `json:"kid"`
	Alg       string `json:"alg"`
	HeldBy    string `json:"held_by"`
	CreatedAt string `json:"created_at"`
}

// registerSigningKey makes a new active signing key: the owner's public key, or one svc holds.
func (h *handlers) registerSigningKey(c *gin.Context) error {
	caller, err := owner(c, true)
	if err != nil {
		return err
	}
	var req signingKeyRequest
	if err := httpx.Decode(c, &req); err != nil {
		return err
	}
	k, err := h.objects.RegisterSigningKey(c.Request.Context(), caller, req.JWK)
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, signingKeyResponse{KID: k.KID, Alg: "EdDSA", HeldBy: k.HeldBy, CreatedAt: clock.Format(k.CreatedAt)})
	return nil
}

// internalSigningKeys answers the services' key set lookups (mailbox-svc verifying a sender).
func (h *handlers) internalSigningKeys(c *gin.Context) error {
	set, err := h.objects.SigningKeys(c.Request.Context(), c.Param("id"))
	return answer(c, "", set, err)
}

type signRequest struct {
	Payload []byte `json:"payload" required:"true"`
	// BindHost adds typ and jku to the protected header (documents served from the object's
	// URLs, such as its agent card).
	BindHost bool `json:"bind_host"`
}

// internalSign signs a payload with the object's active key, for the sends and agent cards svc
// signs on its owner's behalf.
func (h *handlers) internalSign(c *gin.Context) error {
	var req signRequest
	if err := httpx.Decode(c, &req); err != nil {
		return err
	}
	out, err := h.objects.Sign(c.Request.Context(), c.Param("id"), req.Payload, req.BindHost)
	return answer(c, "", out, err)
}

// keyDirectory serves the object's HTTP message signatures directory, its answer signed when svc
// holds the key.
func (h *handlers) keyDirectory(c *gin.Context) error {
	dir, header, err := h.objects.KeyDirectory(c.Request.Context(), c.Param("hash"), authn.PrincipalFrom(c).Viewer())
	return serveDirectory(c, dir, header, err)
}

// serviceKeyDirectory serves the key of svc's own signed requests, its answer signed.
func (h *handlers) serviceKeyDirectory(c *gin.Context) error {
	dir, header, err := h.objects.ServiceKeyDirectory()
	return serveDirectory(c, dir, header, err)
}

// serveDirectory answers a key directory with the headers that sign it, or err.
func serveDirectory(c *gin.Context, dir *object.KeyDirectory, header http.Header, err error) error {
	if err != nil {
		return err
	}
	for k, v := range header {
		c.Header(k, v[0])
	}
	return answer(c, httpsig.DirectoryContentType, dir, nil)
}

// serviceDID serves svc's own did:web document.
func (h *handlers) serviceDID(c *gin.Context) error {
	doc, err := h.objects.ServiceDID()
	return answer(c, signing.DIDContentType, doc, err)
}
