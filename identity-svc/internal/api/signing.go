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
	if err != nil {
		return err
	}
	c.Header("Content-Type", "application/jwk-set+json")
	c.JSON(http.StatusOK, set)
	return nil
}

// did serves the object's did:web document.
func (h *handlers) did(c *gin.Context) error {
	doc, err := h.objects.DID(c.Request.Context(), c.Param("hash"), authn.PrincipalFrom(c).Viewer())
	if err != nil {
		return err
	}
	c.Header("Content-Type", signing.DIDContentType)
	c.JSON(http.StatusOK, doc)
	return nil
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
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, set)
	return nil
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
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, out)
	return nil
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
	c.Header("Content-Type", httpsig.DirectoryContentType)
	c.JSON(http.StatusOK, dir)
	return nil
}

// serviceDID serves svc's own did:web document.
func (h *handlers) serviceDID(c *gin.Context) error {
	doc, err := h.objects.ServiceDID()
	if err != nil {
		return err
	}
	c.Header("Content-Type", signing.DIDContentType)
	c.JSON(http.StatusOK, doc)
	return nil
}
