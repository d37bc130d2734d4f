package graph

import (
	"context"

	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
)

// Private guidance is owner-only steering for one relationship. It is stored here and answered
// only to its author's owner: no event, log line, error, graph or other read carries it.

// MaxGuidance bounds one version of private guidance.
const MaxGuidance = 64 << 10

// GuidanceWrite is the answer of a guidance write.
type GuidanceWrite struct {
	OK        bool   `json:"ok"`
	ThreadID  string `json:"thread_id"`
	Version   int    `json:"version"`
	UpdatedAt string `json:"updated_at"`
}

// GuidanceView is the caller's current guidance for a thread and one page of its versions,
// newest first; NextCursor reads the next.
type GuidanceView struct {
	ThreadID   string            `json:"thread_id"`
	Body       string            `json:"body"`
	Version    int               `json:"version"`
	UpdatedAt  string            `json:"updated_at"`
	Versions   []GuidanceVersion `json:"versions"`
	NextCursor *string           `json:"next_cursor"`
}

// GuidanceVersion names one version.
type GuidanceVersion struct {
	Version   int    `json:"version"`
	CreatedAt string `json:"created_at"`
}

// GuidanceStore keeps the versions of private guidance.
type GuidanceStore interface {
	AppendGuidance(ctx context.Context, threadID, ownerID string, g store.GuidanceVersion) (int64, error)
	GuidancePage(ctx context.Context, threadID, ownerID string, before int64, limit int) ([]store.Numbered[store.GuidanceVersion], int64, error)
}

// GuidanceScope is the cursor scope of a caller's guidance versions in a thread.
func GuidanceScope(threadID, objectID string) string { return "guidance:" + threadID + "/" + objectID }

// PutGuidance records a new version of the caller's guidance for a thread it takes part in.
func (s *Service) PutGuidance(ctx context.Context, c *contract.Principal, threadID, body string) (*GuidanceWrite, error) {
	if err := checkText("body", body, MaxGuidance); err != nil {
		return nil, err
	}
	th, err := s.thread(ctx, threadID, c.ObjectID)
	if err != nil {
		return nil, err
	}
	g := store.GuidanceVersion{Body: body, CreatedAt: clock.Now()}
	v, err := s.Store.AppendGuidance(ctx, th.ID, c.ObjectID, g)
	if err != nil {
		return nil, err
	}
	return &GuidanceWrite{OK: true, ThreadID: th.ID, Version: int(v), UpdatedAt: clock.Format(g.CreatedAt)}, nil
}

// Guidance reads the caller's own guidance for a thread with one page of its versions (the
// first page from the newest, before a cursor's version otherwise); not found while it has none.
func (s *Service) Guidance(ctx context.Context, c *contract.Principal, threadID string, before int64, limit int, cursor func(int64) string) (*GuidanceView, error) {
	th, err := s.thread(ctx, threadID, c.ObjectID)
	if err != nil {
		return nil, err
	}
	latest, _, err := s.Store.GuidancePage(ctx, th.ID, c.ObjectID, 0, 1)
	if err != nil {
		return nil, err
	}
	if len(latest) == 0 {
		return nil, apierr.NotFound("private guidance")
	}
	versions, next, err := s.Store.GuidancePage(ctx, th.ID, c.ObjectID, before, limit)
	if err != nil {
		return nil, err
	}
	cur := latest[0]
	out := &GuidanceView{ThreadID: th.ID, Body: cur.Value.Body, Version: int(cur.Seq), UpdatedAt: clock.Format(cur.Value.CreatedAt),
		Versions: make([]GuidanceVersion, 0, len(versions))}
	for _, v := range versions {
		out.Versions = append(out.Versions, GuidanceVersion{Version: int(v.Seq), CreatedAt: clock.Format(v.Value.CreatedAt)})
	}
	if next > 0 && cursor != nil {
		out.NextCursor = contract.Optional(cursor(next))
	}
	return out, nil
}
