package object

import (
	"context"
	"strings"

	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
)

// maxQuery bounds the directory search text.
const maxQuery = 200

// DirectoryScope is the scope of the directory's cursors (httpx.SeqCursor).
const DirectoryScope = "directory"

// DirectoryQuery is a directory search as the API receives it.
type DirectoryQuery struct {
	Limit  int
	Before string // the object id a previous page's cursor names, "" for the newest
	Q      string
	Status string // "", verified or unclaimed
}

// Directory lists public objects, newest first, and the object id to page on from ("" on the
// last). A page that matches little may come back short with a cursor (store.Directory).
func (s *Service) Directory(ctx context.Context, in DirectoryQuery) ([]store.Object, string, error) {
	q := store.DirectoryQuery{Limit: in.Limit, Before: in.Before, Match: strings.TrimSpace(in.Q)}
	if len(q.Match) > maxQuery {
		return nil, "", apierr.BadRequest(apierr.CodeInvalidRequest, "q is longer than %d characters", maxQuery)
	}
	switch in.Status {
	case "":
	case "verified":
		q.Status = StatusClaimed
	case "unclaimed":
		q.Status = StatusUnclaimed
	default:
		return nil, "", apierr.BadRequest(apierr.CodeInvalidRequest, "status must be verified or unclaimed")
	}
	return s.Store.Directory(ctx, q)
}
