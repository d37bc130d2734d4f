package profile

import (
	"context"

	"github.com/svcdev/svc/pkg/httpx"
)

// BlockedHashes lists the sender hashes the object blocks, for its owner's rules read.
func (s *Service) BlockedHashes(ctx context.Context, objectID string) ([]string, error) {
	blocked, err := s.Mailbox.BlockedHashes(ctx, objectID)
	if err != nil {
		return nil, httpx.Unavailable(err)
	}
	return blocked, nil
}
