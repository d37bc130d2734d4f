package profile

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/mongox"
)

// Decision memory is owner-only: its writes are versions of its own (store.Memory), so they
// move no context version, report nothing to identity-svc, replace no public validator and
// publish no event. Nothing outside the owner's own reads learns that it was written.

// MaxRebuildDecisions bounds the decisions a rebuild reads, newest first.
const MaxRebuildDecisions = 500

// CodePreconditionFailed is the error code of a write whose If-Match names a stale version.
const CodePreconditionFailed = "PRECONDITION_FAILED"

// Memory is the versions of decision memory (store.Store).
type Memory interface {
	MemoryVersion(ctx context.Context, objectID string) (int, error)
	MemoryOf(ctx context.Context, objectID string, version int) (*store.Memory, error)
	MemoryVersions(ctx context.Context, objectID string, before, limit int) ([]store.Memory, error)
	WriteMemory(ctx context.Context, objectID string, m store.Memory, ifMatch *int) (*store.Memory, error)
	CarryMemory(ctx context.Context, objectID, body string, at time.Time) error
}

// Memory reads the object's current decision memory: version 0 with an empty body before any
// write.
func (s *Service) Memory(ctx context.Context, objectID string) (*store.Memory, error) {
	n, err := s.carryMemory(ctx, objectID)
	if err != nil || n == 0 {
		return &store.Memory{ObjectID: objectID}, err
	}
	return s.Store.MemoryOf(ctx, objectID, n)
}

// MemoryAt reads one version of the object's decision memory.
func (s *Service) MemoryAt(ctx context.Context, objectID string, version int) (*store.Memory, error) {
	if _, err := s.carryMemory(ctx, objectID); err != nil {
		return nil, err
	}
	m, err := s.Store.MemoryOf(ctx, objectID, version)
	return m, notFound(err, "decision memory version")
}

// MemoryVersions lists up to limit versions of the object's decision memory below version
// before (0: from the current one), newest first, without their text.
func (s *Service) MemoryVersions(ctx context.Context, objectID string, before, limit int) ([]store.Memory, error) {
	if _, err := s.carryMemory(ctx, objectID); err != nil {
		return nil, err
	}
	return s.Store.MemoryVersions(ctx, objectID, before, limit)
}

// PutMemory replaces decision memory with a new version. With ifMatch it writes only while the
// current version is *ifMatch: a stale one is 412 PRECONDITION_FAILED, decided by the insert of
// the next version, so that of writers holding one version exactly one succeeds.
func (s *Service) PutMemory(ctx context.Context, t Target, body string, ifMatch *int) (*store.Memory, error) {
	return s.writeMemory(ctx, t, store.MemoryPut, body, ifMatch)
}

// RebuildMemory replaces decision memory by the major decisions recorded in the object's
// threads, as learned from graph-svc's decision.recorded events (those the object recorded or
// accepted: the consumer keeps no other), each naming its author, and says how many current
// ones it used. A decision a later one superseded is listed apart, marked, never as current.
func (s *Service) RebuildMemory(ctx context.Context, t Target) (*store.Memory, int, error) {
	current, superseded, err := s.Decisions(ctx, t.ObjectID)
	if err != nil {
		return nil, 0, err
	}
	m, err := s.writeMemory(ctx, t, store.MemoryRebuild, DecisionMemory(current, superseded, clock.Now()), nil)
	return m, len(current), err
}

// Decisions are the object's newest MaxRebuildDecisions recorded decisions, split into the
// current major ones and the superseded ones: the data decision memory's markdown is rendered
// from, and what GET …/decision-memory?format=json answers.
func (s *Service) Decisions(ctx context.Context, objectID string) (current, superseded []Decision, err error) {
	recorded, err := s.Store.RecentDecisions(ctx, objectID, MaxRebuildDecisions)
	if err != nil {
		return nil, nil, err
	}
	all := make([]Decision, 0, len(recorded))
	for _, d := range recorded {
		all = append(all, Decision{ThreadID: d.ThreadID, NodeID: d.NodeID, Title: d.Title, Body: d.Body,
			Confidence: d.Confidence, Supersedes: d.Supersedes, CreatedAt: d.CreatedAt, ValidFrom: d.ValidFrom, ValidUntil: d.ValidUntil,
			AuthorHash: d.AuthorHash})
	}
	current, superseded = Current(all)
	return current, superseded, nil
}

func (s *Service) writeMemory(ctx context.Context, t Target, change, body string, ifMatch *int) (*store.Memory, error) {
	if _, err := s.carryMemory(ctx, t.ObjectID); err != nil {
		return nil, err
	}
	m, err := s.Store.WriteMemory(ctx, t.ObjectID, store.Memory{Change: change, Body: body, CreatedAt: clock.Now()}, ifMatch)
	switch {
	case errors.Is(err, store.ErrStaleMemory):
		return nil, apierr.Errorf(http.StatusPreconditionFailed, CodePreconditionFailed,
			"decision memory is no longer at version %d: read it again, then write", *ifMatch)
	case errors.Is(err, store.ErrContention):
		return nil, apierr.Conflict(apierr.CodeConflict, "too many concurrent writes to decision memory, retry")
	}
	return m, err
}

// carryMemory returns the current version of the object's decision memory. An object whose
// memory was written while it shared the context's versions, and that has no version of its
// own yet, gets that memory as its version 1 first: once per object, a few point reads.
func (s *Service) carryMemory(ctx context.Context, objectID string) (int, error) {
	n, err := s.Store.MemoryVersion(ctx, objectID)
	if err != nil || n > 0 {
		return n, err
	}
	p, err := s.Profile(ctx, objectID) // also 404 for an object that does not exist
	if err != nil || p.MemoryVersion == 0 {
		return 0, err
	}
	at := p.UpdatedAt
	if v, err := s.Store.VersionOf(ctx, objectID, p.MemoryVersion); err == nil {
		at = v.UpdatedAt
	} else if !errors.Is(err, mongox.ErrNotFound) {
		return 0, err
	}
	if err := s.Store.CarryMemory(ctx, objectID, p.Memory, at); err != nil {
		return 0, err
	}
	return s.Store.MemoryVersion(ctx, objectID)
}
