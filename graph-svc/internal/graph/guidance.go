package graph

import (
	"context"
	"errors"

	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/httpx"
)

// Private guidance is owner-only steering for one relationship. It is stored here and answered
// only to its author's owner: no event, log line, error, graph or other read carries it.

// MaxGuidance bounds one version of private guidance.
const MaxGuidance = 64 << 10

// guidanceAttempts bounds the retries of a write that lost its version number to a concurrent one.
const guidanceAttempts = 8

// GuidanceWrite is the answer of a guidance write.
type GuidanceWrite struct {
	OK        bool   `json:"ok"`
	ThreadID  string `json:"thread_id"`
	Version   int    `json:"version"`
	UpdatedAt string `json:"updated_at"`
}

// GuidanceView is the caller's current guidance for a thread and the list of its versions.
type GuidanceView struct {
	ThreadID  string            `json:"thread_id"`
	Body      string            `json:"body"`
	Version   int               `json:"version"`
	UpdatedAt string            `json:"updated_at"`
	Versions  []GuidanceVersion `json:"versions"`
}

// GuidanceVersion names one version.
type GuidanceVersion struct {
	Version   int    `json:"version"`
	CreatedAt string `json:"created_at"`
}

// PutGuidance records a new version of the caller's guidance for a thread it takes part in.
func (s *Service) PutGuidance(ctx context.Context, c Caller, threadID, body string) (*GuidanceWrite, error) {
	if err := checkText("body", body, MaxGuidance); err != nil {
		return nil, err
	}
	th, err := s.thread(ctx, threadID, c.ObjectID)
	if err != nil {
		return nil, err
	}
	for range guidanceAttempts {
		versions, err := s.Store.GuidanceOf(ctx, th.ID, c.ObjectID)
		if err != nil {
			return nil, err
		}
		next := 1
		if len(versions) > 0 {
			next = versions[0].Version + 1
		}
		g := &store.GuidanceVersion{ID: store.GuidanceID(th.ID, c.ObjectID, next), ThreadID: th.ID, OwnerID: c.ObjectID,
			Version: next, Body: body, CreatedAt: clock.Now()}
		err = s.Store.InsertGuidance(ctx, g)
		if errors.Is(err, store.ErrTaken) {
			continue // a concurrent write took this version: write the next one
		}
		if err != nil {
			return nil, err
		}
		return &GuidanceWrite{OK: true, ThreadID: th.ID, Version: next, UpdatedAt: clock.Format(g.CreatedAt)}, nil
	}
	return nil, httpx.Conflict(httpx.CodeConflict, "private guidance is being written concurrently: retry")
}

// Guidance reads the caller's own guidance for a thread; not found while it has none.
func (s *Service) Guidance(ctx context.Context, c Caller, threadID string) (*GuidanceView, error) {
	th, err := s.thread(ctx, threadID, c.ObjectID)
	if err != nil {
		return nil, err
	}
	versions, err := s.Store.GuidanceOf(ctx, th.ID, c.ObjectID)
	if err != nil {
		return nil, err
	}
	if len(versions) == 0 {
		return nil, httpx.NotFound("private guidance")
	}
	cur := versions[0]
	out := &GuidanceView{ThreadID: th.ID, Body: cur.Body, Version: cur.Version, UpdatedAt: clock.Format(cur.CreatedAt),
		Versions: make([]GuidanceVersion, 0, len(versions))}
	for _, v := range versions {
		out.Versions = append(out.Versions, GuidanceVersion{Version: v.Version, CreatedAt: clock.Format(v.CreatedAt)})
	}
	return out, nil
}
