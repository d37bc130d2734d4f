// Package mailbox is context-svc's client of mailbox-svc's internal API: the sender blocks that
// the rules read shows to an object's owner.
package mailbox

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Client calls mailbox-svc.
type Client struct {
	base string
	http *http.Client
}

// NewClient returns a client of mailbox-svc at base (which may be empty: no mailbox-svc yet);
// httpClient must add internal tokens.
func NewClient(base string, httpClient *http.Client) *Client {
	return &Client{base: strings.TrimRight(base, "/"), http: httpClient}
}

// BlockedHashes lists the sender hashes an object blocks. Without a mailbox-svc, or when it
// does not know the object, the list is empty.
func (c *Client) BlockedHashes(ctx context.Context, objectID string) ([]string, error) {
	out := []string{}
	if c.base == "" {
		return out, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		c.base+"/internal/v1/objects/"+url.PathEscape(objectID)+"/blocked", nil)
	if err != nil {
		return nil, fmt.Errorf("mailbox request: %w", err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("mailbox blocked: %w", err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return out, nil
	case resp.StatusCode >= 300:
		return nil, fmt.Errorf("mailbox blocked: status %d", resp.StatusCode)
	}
	var body struct {
		BlockedHashes []string `json:"blocked_hashes"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&body); err != nil {
		return nil, fmt.Errorf("mailbox blocked: decode: %w", err)
	}
	if body.BlockedHashes != nil {
		out = body.BlockedHashes
	}
	return out, nil
}
