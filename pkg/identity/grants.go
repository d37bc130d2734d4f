package identity

import (
	"context"
	"net/http"
	"net/url"

	"github.com/svcdev/svc/pkg/contract"
)

// CreateGrantKey has identity-svc make the sub-key of an OAuth grant of objectID, through its
// sub-key use case; the answer names the key's id and digest, never the key.
func (c *Client) CreateGrantKey(ctx context.Context, objectID string, req contract.GrantKeyRequest) (*contract.GrantKey, error) {
	var out contract.GrantKey
	if err := c.call(ctx, http.MethodPost, "/internal/v1/objects/"+url.PathEscape(objectID)+"/grant-keys", req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RevokeGrantKey has identity-svc revoke the sub-key of an OAuth grant of objectID.
func (c *Client) RevokeGrantKey(ctx context.Context, objectID, keyID string) error {
	return c.call(ctx, http.MethodDelete, "/internal/v1/objects/"+url.PathEscape(objectID)+"/grant-keys/"+url.PathEscape(keyID), nil, nil)
}
