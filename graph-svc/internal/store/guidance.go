package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// GuidanceVersion is one version of an owner's private guidance for a thread. Versions are
// numbered from 1; the highest is the current guidance. Its _id is GuidanceID, so that two
// concurrent writes of the same version collide and the loser writes the next one.
type GuidanceVersion struct {
	ID        string    `bson:"_id"`
	ThreadID  string    `bson:"thread_id"`
	OwnerID   string    `bson:"owner_id"`
	Version   int       `bson:"version"`
	Body      string    `bson:"body"`
	CreatedAt time.Time `bson:"created_at"`
}

// GuidanceID is the _id of an owner's version of a thread's guidance.
func GuidanceID(threadID, ownerID string, version int) string {
	return fmt.Sprintf("%s/%s/%06d", threadID, ownerID, version)
}

// InsertGuidance stores a version; ErrTaken when that version exists.
func (s *Store) InsertGuidance(ctx context.Context, g *GuidanceVersion) error {
	return s.insert(ctx, Guidance, g)
}

// GuidanceOf lists an owner's versions of a thread's guidance, newest first.
func (s *Store) GuidanceOf(ctx context.Context, threadID, ownerID string) ([]GuidanceVersion, error) {
	return mongox.FindAll[GuidanceVersion](ctx, s.c(Guidance),
		bson.D{{Key: "thread_id", Value: threadID}, {Key: "owner_id", Value: ownerID}},
		mopts.Find().SetSort(bson.D{{Key: "version", Value: -1}}))
}
