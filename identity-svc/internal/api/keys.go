package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/identity-svc/internal/object"
	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/httpx"
)

type createKeyRequest struct {
	Label  *string  `json:"label"`
	Scopes []string `json:"scopes"`
}

type keyResponse struct {
	ID         string   `json:"id"`
	Label      string   `json:"label"`
	Scopes     []string `json:"scopes"`
	Key        string   `json:"key,omitempty"`
	Prefix     string   `json:"prefix,omitempty"`
	CreatedAt  string   `json:"created_at"`
	LastUsedAt *string  `json:"last_used_at"`
}

func keyView(k *store.Key) keyResponse {
	return keyResponse{ID: k.KeyID, Label: k.Label, Scopes: k.Scopes, Prefix: k.Prefix,
		CreatedAt: clock.Format(k.CreatedAt), LastUsedAt: clock.FormatPtr(k.LastUsedAt)}
}

func (h *handlers) rotateKey(c *gin.Context) error {
	caller, err := owner(c, true)
	if err != nil {
		return err
	}
	r, err := h.objects.Rotate(c.Request.Context(), httpx.RequestID(c), caller)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"hash": caller.Hash, "api_key": r.APIKey, "key_id": r.KeyID, "rotated_at": r.At})
	return nil
}

func (h *handlers) createKey(c *gin.Context) error {
	caller, err := owner(c, true)
	if err != nil {
		return err
	}
	var req createKeyRequest
	if err := httpx.Decode(c, &req); err != nil {
		return err
	}
	k, key, err := h.objects.CreateKey(c.Request.Context(), httpx.RequestID(c), caller, object.NewKey{Label: deref(req.Label), Scopes: req.Scopes})
	if err != nil {
		return err
	}
	resp := keyView(k)
	resp.Key = key
	c.JSON(http.StatusCreated, resp)
	return nil
}

func (h *handlers) listKeys(c *gin.Context) error {
	return ownerPage(c, true, object.KeysScope, "keys", h.objects.SubKeys, keyView)
}

func (h *handlers) revokeKey(c *gin.Context) error {
	caller, err := owner(c, true)
	if err != nil {
		return err
	}
	id := c.Param("keyId")
	if err := h.objects.RevokeKey(c.Request.Context(), httpx.RequestID(c), caller, id); err != nil {
		return err
	}
	c.JSON(http.StatusOK, gin.H{"ok": true, "revoked": id})
	return nil
}
