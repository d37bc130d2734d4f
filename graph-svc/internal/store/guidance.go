package store

import (
	"context"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// GuidanceVersion is one version of an owner's private guidance for a thread: an element of the
// numbered list v|<thread>|<owner>, whose position is its version number. Two concurrent writes
// claim two positions, so no version is lost, and the current guidance is the list's last.
type GuidanceVersion struct {
	Body      string    `bson:"body"`
	CreatedAt time.Time `bson:"created_at"`
}

func guidanceScope(threadID, ownerID string) string {
	return mongox.Scope("v", keyText(threadID), keyText(ownerID))
}

// AppendGuidance stores a new version and returns its number.
func (s *Store) AppendGuidance(ctx context.Context, threadID, ownerID string, g GuidanceVersion) (int64, error) {
	return appendNumbered(ctx, s, guidanceScope(threadID, ownerID), g.CreatedAt, g)
}

// GuidancePage reads up to limit of an owner's versions of a thread's guidance, newest first,
// below version before (0: from the newest): one find. It returns the version the next page
// reads below (0 on the last).
func (s *Store) GuidancePage(ctx context.Context, threadID, ownerID string, before int64, limit int) ([]Numbered[GuidanceVersion], int64, error) {
	return pageNumbered[GuidanceVersion](ctx, s, guidanceScope(threadID, ownerID), before, limit)
}
