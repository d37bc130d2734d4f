package rpc

import (
	"context"
	"net/http"
	"net/url"

	"github.com/svcdev/svc/pkg/contract"
)

// ClaimsClient calls claims-svc's internal API.
type ClaimsClient struct{ rpc *Client }

// NewClaimsClient returns a client of claims-svc at base (empty: no claims-svc is deployed);
// httpClient must add internal tokens.
func NewClaimsClient(base string, httpClient *http.Client) *ClaimsClient {
	return &ClaimsClient{rpc: New("claims-svc", base, httpClient, 0)}
}

// SocialMatch reports whether the object holds a verified github, x, linkedin or mastodon claim
// whose handle equals username. Without a claims-svc no object does.
func (c *ClaimsClient) SocialMatch(ctx context.Context, objectID, username string) (bool, error) {
	if !c.rpc.Configured() {
		return false, nil
	}
	var out contract.SocialMatch
	path := "/internal/v1/objects/" + url.PathEscape(objectID) + "/social-match/" + url.PathEscape(username)
	if err := c.rpc.Do(ctx, http.MethodGet, path, nil, &out); err != nil {
		return false, err
	}
	return out.Match, nil
}
