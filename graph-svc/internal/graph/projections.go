package graph

import (
	"context"
	"time"

	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/contract"
)

// graph-svc answers from its own projections of other services' data: who takes part in a
// thread (message.created, or mailbox-svc's answer the one time a thread is asked for before its
// first message was projected), the current hash of each object it has seen (message.created,
// then identity-svc's object.hash_changed) and the sender blocks of box owners (mailbox-svc's
// sender.blocked and sender.unblocked). A graph read or a decision calls no other service.

// ProjectionStore keeps the projections of other services' data graph-svc answers from.
type ProjectionStore interface {
	Hash(ctx context.Context, objectID string) (string, error)
	SetHash(ctx context.Context, objectID, hash string) error
	SetBlock(ctx context.Context, blockerID, senderID string, blocked bool, at time.Time) error
	Blocked(ctx context.Context, blockerID, senderID string) (bool, error)
}

// ProjectHash records an object's new current hash (identity-svc's object.hash_changed).
func (s *Service) ProjectHash(ctx context.Context, objectID, hash string) error {
	return s.Store.SetHash(ctx, objectID, hash)
}

// ProjectBlock records that blocker blocks, or no longer blocks, sender.
func (s *Service) ProjectBlock(ctx context.Context, blockerID, senderID string, blocked bool, at time.Time) error {
	return s.Store.SetBlock(ctx, blockerID, senderID, blocked, at)
}

// rememberHashes records the hashes a batch of messages names, for objects this process has
// not recorded yet: one insert at most.
func (s *Service) rememberHashes(ctx context.Context, msgs []contract.MessageCreatedData) error {
	var ps []contract.Participant
	for _, m := range msgs {
		ps = append(ps, contract.Participant{ObjectID: m.FromObjectID, Hash: m.FromHash}, contract.Participant{ObjectID: m.ToObjectID, Hash: m.ToHash})
	}
	return s.rememberParticipants(ctx, ps)
}

// rememberParticipants records the hashes of participants whose hash this process has not
// recorded yet, in one insert.
func (s *Service) rememberParticipants(ctx context.Context, ps []contract.Participant) error {
	s.knownOnce.Do(s.initKnown)
	var hs []store.ObjectHash
	seen := map[string]bool{}
	for _, p := range ps {
		if p.Hash == "" || p.ObjectID == "" || seen[p.ObjectID] || s.hashed.Contains(p.ObjectID) {
			continue
		}
		seen[p.ObjectID] = true
		hs = append(hs, store.ObjectHash{ObjectID: p.ObjectID, Hash: p.Hash})
	}
	if err := s.Store.RememberHashes(ctx, hs); err != nil {
		return err
	}
	for _, h := range hs {
		s.hashed.Add(h.ObjectID, struct{}{})
	}
	return nil
}

// participants returns who takes part in a thread with their current hashes, from the
// projections: the caller is named by the hash it called with.
func (s *Service) participants(ctx context.Context, th *store.Thread, c *contract.Principal) ([]contract.Participant, error) {
	out := make([]contract.Participant, 0, len(th.Participants))
	for _, id := range th.Participants {
		if id == c.ObjectID {
			out = append(out, contract.Participant{ObjectID: id, Hash: c.Hash})
			continue
		}
		h, err := s.Store.Hash(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, contract.Participant{ObjectID: id, Hash: h})
	}
	return out, nil
}

// currentHashes maps the thread's participants to their hashes now ("" for an object whose hash
// graph-svc has not learned), so that a read names authors by their current hash after a custom
// hash replaced the one they wrote under, and by the hash they wrote under otherwise.
func (s *Service) currentHashes(ctx context.Context, th *store.Thread, c *contract.Principal) (map[string]string, error) {
	parts, err := s.participants(ctx, th, c)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(parts))
	for _, p := range parts {
		out[p.ObjectID] = p.Hash
	}
	return out, nil
}

// checkNotBlocked refuses a write of the caller into a thread whose other participant blocked
// it: a block covers the graph as it covers messages, so a blocked sender's nodes, edges and
// decisions never reach the box owner (nor its decision webhooks and memory).
func (s *Service) checkNotBlocked(ctx context.Context, th *store.Thread, c *contract.Principal) error {
	for _, id := range th.Participants {
		if id == c.ObjectID {
			continue
		}
		blocked, err := s.blocked(ctx, id, c.ObjectID)
		if err != nil {
			return err
		}
		if blocked {
			return apierr.Forbidden(apierr.CodeSenderBlocked, "the other participant of this thread blocked you: you cannot write into its graph")
		}
	}
	return nil
}

// blocked reports whether blocker blocks sender. The projection of mailbox-svc's block events
// answers while it has applied blocker's latest block control (pkg/controls); right after a
// block or an unblock, until it has, mailbox-svc answers (or the write is refused with 503), so
// that a block binds every node, edge and decision that starts after its 200, whatever backlog
// of message events is ahead of its sender.blocked.
func (s *Service) blocked(ctx context.Context, blocker, sender string) (bool, error) {
	projection := func(ctx context.Context) (bool, error) { return s.Store.Blocked(ctx, blocker, sender) }
	if s.BlockGuard == nil {
		return projection(ctx)
	}
	return s.BlockGuard.Get(ctx, blocker, blocker+"|"+sender, projection, func(ctx context.Context) (bool, error) {
		return s.Mailbox.Blocked(ctx, blocker, sender)
	})
}
