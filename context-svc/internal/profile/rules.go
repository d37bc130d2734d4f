package profile

import (
	"context"
)

// BlockedHashes lists the sender hashes the object blocks, for its owner's rules read: context-svc's
// projection of mailbox-svc's blocks, so that the read needs no other service.
func (s *Service) BlockedHashes(ctx context.Context, objectID string) ([]string, error) {
	return s.Store.BlockedHashes(ctx, objectID)
}
