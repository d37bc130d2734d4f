package rpc

import (
	"context"
	"net/http"
	"net/url"

	"github.com/svcdev/svc/pkg/contract"
)

// maxThreadBytes caps mailbox-svc's answer of one thread's participants.
const maxThreadBytes = 64 << 10

// MailboxClient calls mailbox-svc's internal API.
type MailboxClient struct{ rpc *Client }

// NewMailboxClient returns a client of mailbox-svc at base (empty: no mailbox-svc is deployed);
// httpClient must add internal tokens.
func NewMailboxClient(base string, httpClient *http.Client) *MailboxClient {
	return &MailboxClient{rpc: New("mailbox-svc", base, httpClient, maxThreadBytes)}
}

// Thread reads who takes part in a thread; ErrNotFound when mailbox-svc knows no such thread.
func (c *MailboxClient) Thread(ctx context.Context, threadID string) (*contract.Thread, error) {
	var out contract.Thread
	if err := c.rpc.Do(ctx, http.MethodGet, "/internal/v1/threads/"+url.PathEscape(threadID), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Blocked reports whether objectID blocks senderID now, as mailbox-svc's own store says: asked
// only while the caller's projection of the blocks is behind a control (pkg/controls). Without a
// mailbox-svc there are no blocks.
func (c *MailboxClient) Blocked(ctx context.Context, objectID, senderID string) (bool, error) {
	if !c.rpc.Configured() {
		return false, nil
	}
	var out contract.SenderBlocked
	err := c.rpc.Do(ctx, http.MethodGet, "/internal/v1/objects/"+url.PathEscape(objectID)+"/blocks/"+url.PathEscape(senderID), nil, &out)
	return out.Blocked, err
}
