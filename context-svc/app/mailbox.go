package app

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/svcdev/svc/pkg/rpc"
)

// mailboxClient reads sender blocks from mailbox-svc's internal API.
type mailboxClient struct{ rpc *rpc.Client }

// BlockedHashes lists the sender hashes an object blocks. Without a mailbox-svc, or when it does
// not know the object, the list is empty.
func (m mailboxClient) BlockedHashes(ctx context.Context, objectID string) ([]string, error) {
	if !m.rpc.Configured() {
		return []string{}, nil
	}
	var body struct {
		BlockedHashes []string `json:"blocked_hashes"`
	}
	err := m.rpc.Do(ctx, http.MethodGet, "/internal/v1/objects/"+url.PathEscape(objectID)+"/blocked", nil, &body)
	if err != nil && !errors.Is(err, rpc.ErrNotFound) {
		return nil, err
	}
	if body.BlockedHashes == nil {
		return []string{}, nil
	}
	return body.BlockedHashes, nil
}
