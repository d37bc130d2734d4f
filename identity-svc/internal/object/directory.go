package object

import (
	"context"
	"strings"

	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/httpx"
)

// maxQuery bounds the directory search text.
const maxQuery = 200

// DirectoryQuery is a directory search as the API receives it.
type DirectoryQuery struct {
	Limit  int
	Before string
	Q      string
	Status string // "", verified or unclaimed
}

// Directory lists public objects, newest first; the next cursor is nil on the last page.
func (s *Service) Directory(ctx context.Context, in DirectoryQuery) ([]store.Object, *string, error) {
	q := store.DirectoryQuery{Limit: in.Limit + 1, Before: in.Before, Match: strings.TrimSpace(in.Q)}
	if len(q.Match) > maxQuery {
		return nil, nil, httpx.BadRequest(httpx.CodeInvalidRequest, "q is longer than %d characters", maxQuery)
	}
	switch in.Status {
	case "":
	case "verified":
		q.Status = StatusClaimed
	case "unclaimed":
		q.Status = StatusUnclaimed
	default:
		return nil, nil, httpx.BadRequest(httpx.CodeInvalidRequest, "status must be verified or unclaimed")
	}
	objs, err := s.Store.Directory(ctx, q)
	if err != nil {
		return nil, nil, err
	}
	objs, next := httpx.Page(objs, in.Limit, func(o store.Object) string { return o.ID })
	return objs, next, nil
}
