package store

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	mopts "go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/svcdev/svc/pkg/mongox"
)

// Source is a tracked source of a thread: a URL fetched into a node, inserted once. What
// happens to it afterwards is a Pull each.
type Source struct {
	ID        string `bson:"_id"`
	ThreadID  string `bson:"thread_id"`
	OwnerID   string `bson:"owner_id"`
	OwnerHash string `bson:"owner_hash"`
	Kind      string `bson:"kind"`
	// URL is the address as the owner gave it; FetchURL the one fetched (a cloud drive's direct
	// download form).
	URL        string    `bson:"url"`
	FetchURL   string    `bson:"fetch_url"`
	Visibility string    `bson:"visibility"`
	CreatedAt  time.Time `bson:"created_at"`
}

// Pull is one fetch of a source: its outcome, the digest of the text it read and the node that
// holds that text (a new node when the text changed). The latest pull is the source's status.
type Pull struct {
	ID        string    `bson:"_id"`
	SourceID  string    `bson:"source_id"`
	At        time.Time `bson:"at"`
	Status    string    `bson:"status"`
	Error     string    `bson:"error,omitempty"`
	Digest    string    `bson:"digest,omitempty"`
	NodeID    string    `bson:"node_id,omitempty"`
	Changed   bool      `bson:"changed,omitempty"`
	Scheduled bool      `bson:"scheduled,omitempty"`
	Events    []string  `bson:"_events,omitempty"`
}

// InsertSource stores a new source.
func (s *Store) InsertSource(ctx context.Context, src *Source) error {
	return s.insert(ctx, Sources, src)
}

// Source reads a source; mongox.ErrNotFound if there is none.
func (s *Store) Source(ctx context.Context, id string) (*Source, error) {
	var src Source
	if err := mongox.FindOne(ctx, s.c(Sources), mongox.ByID(id), &src); err != nil {
		return nil, err
	}
	return &src, nil
}

// SourcesOf lists a thread's sources, oldest first.
func (s *Store) SourcesOf(ctx context.Context, threadID string) ([]Source, error) {
	return mongox.FindAll[Source](ctx, s.c(Sources), byThread(threadID), oldestFirst())
}

// SourcesOwnedBy lists the sources an object added, oldest first.
func (s *Store) SourcesOwnedBy(ctx context.Context, ownerID string) ([]Source, error) {
	return mongox.FindAll[Source](ctx, s.c(Sources), bson.D{{Key: "owner_id", Value: ownerID}}, oldestFirst())
}

// AllSources lists every source, for the scheduled re-pull.
func (s *Store) AllSources(ctx context.Context) ([]Source, error) {
	return mongox.FindAll[Source](ctx, s.c(Sources), bson.D{}, oldestFirst())
}

// InsertPull records a pull.
func (s *Store) InsertPull(ctx context.Context, p *Pull) error { return s.insert(ctx, Pulls, p) }

// PullSummary is what a source's pulls say of it: the latest pull, the latest pull that read
// text (nil before the first), and the latest failed one.
type PullSummary struct {
	Latest, LatestOK, LatestError *Pull
}

// PullSummaries summarises the pulls of the given sources, by source id.
func (s *Store) PullSummaries(ctx context.Context, sourceIDs []string) (map[string]PullSummary, error) {
	all, err := mongox.FindAll[Pull](ctx, s.c(Pulls), bson.D{{Key: "source_id", Value: bson.D{{Key: "$in", Value: sourceIDs}}}},
		mopts.Find().SetSort(bson.D{{Key: "at", Value: 1}, {Key: "_id", Value: 1}}))
	if err != nil {
		return nil, err
	}
	out := make(map[string]PullSummary, len(sourceIDs))
	for i := range all {
		p := &all[i]
		sum := out[p.SourceID]
		sum.Latest = p
		if p.Status == "ok" {
			sum.LatestOK = p
		} else {
			sum.LatestError = p
		}
		out[p.SourceID] = sum
	}
	return out, nil
}
