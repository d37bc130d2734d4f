package store

import (
	"context"
	"time"

	"github.com/svcdev/svc/pkg/mongox"
)

// GuidanceVersion is one version of an owner's private guidance for a thread: an entry of the
// list guidance:<thread>/<owner> in graph_log, whose position is its version number. Two
// concurrent writes claim two positions, so no version is lost, and the current guidance is the
// list's newest entry: every read is a point read.
type GuidanceVersion struct {
	Body      string    `bson:"body"`
	CreatedAt time.Time `bson:"created_at"`
}

func guidanceList(threadID, ownerID string) string { return "guidance:" + threadID + "/" + ownerID }

// AppendGuidance stores a new version and returns its number.
func (s *Store) AppendGuidance(ctx context.Context, threadID, ownerID string, g GuidanceVersion) (int64, error) {
	return appendTo(ctx, s, guidanceList(threadID, ownerID), g)
}

// GuidancePage reads up to limit of an owner's versions of a thread's guidance, newest first,
// below version before (0: from the newest).
func (s *Store) GuidancePage(ctx context.Context, threadID, ownerID string, before int64, limit int) ([]mongox.Entry[GuidanceVersion], int64, error) {
	return mongox.Page[GuidanceVersion](ctx, s.Log(), guidanceList(threadID, ownerID), before, limit)
}
