package rpc

import (
	"context"
	"net/http"
	"net/url"

	"github.com/svcdev/svc/pkg/contract"
)

// ContextClient calls context-svc's internal API.
type ContextClient struct{ rpc *Client }

// NewContextClient returns a client of context-svc at base; httpClient must add internal tokens.
func NewContextClient(base string, httpClient *http.Client) *ContextClient {
	return &ContextClient{rpc: New("context-svc", base, httpClient, 0)}
}

// Configured reports whether the client has an address to call.
func (c *ContextClient) Configured() bool { return c.rpc.Configured() }

// ComposedProfile returns the markdown of an object's composed public profile, as its llm.txt
// read under hash shows it.
func (c *ContextClient) ComposedProfile(ctx context.Context, objectID, hash string) (string, error) {
	var out contract.ComposedProfile
	err := c.rpc.Do(ctx, http.MethodGet, "/internal/v1/objects/"+url.PathEscape(objectID)+"/profile?hash="+url.QueryEscape(hash), nil, &out)
	return out.Markdown, err
}

// Admission returns what an object's current rules say of admission, as context-svc's own store
// says: asked only while mailbox-svc's projection of the rules is behind a rules write
// (pkg/controls). ErrNotFound when context-svc knows no such object.
func (c *ContextClient) Admission(ctx context.Context, objectID string) (contract.Admission, error) {
	var out contract.Admission
	err := c.rpc.Do(ctx, http.MethodGet, "/internal/v1/objects/"+url.PathEscape(objectID)+"/admission", nil, &out)
	return out, err
}
