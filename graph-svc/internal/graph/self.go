package graph

import (
	"context"

	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
)

// selfPrefix starts the id of an owner's self-ingest thread, which only graph-svc knows.
const selfPrefix = "ths_"

// selfThread returns the caller's self-ingest thread, recording it on first use. Its id is
// derived from the owner, so concurrent first ingests share one thread.
func (s *Service) selfThread(ctx context.Context, c *contract.Principal) (*store.Thread, error) {
	th := &store.Thread{ID: SelfThreadID(c.ObjectID), Participants: []string{c.ObjectID}, Self: true, OwnerID: c.ObjectID,
		CreatedAt: clock.Now()}
	if err := s.Store.AddThread(ctx, th); err != nil {
		return nil, err
	}
	return s.Store.Thread(ctx, th.ID)
}

// SelfThreadID is the id of an owner's self-ingest thread.
func SelfThreadID(objectID string) string { return selfPrefix + objectID }
