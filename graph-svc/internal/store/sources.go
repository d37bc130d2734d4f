package store

import (
	"context"
	"time"

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
	if s.staged(src) {
		return nil
	}
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

// SourcesPage reads up to limit of a thread's sources, newest first, below position before.
func (s *Store) SourcesPage(ctx context.Context, threadID string, before int64, limit int) ([]mongox.Entry[Source], int64, error) {
	return mongox.Page[Source](ctx, s.Log(), sourcesList(threadID), before, limit)
}

// AppendSource lists a stored source in its thread's sources.
func (s *Store) AppendSource(ctx context.Context, src *Source) error {
	_, _, err := appendOnceTo(ctx, s, sourcesList(src.ThreadID), src.ID, *src)
	return err
}

// SourceCount is how many sources a thread's list holds.
func (s *Store) SourceCount(ctx context.Context, threadID string) (int64, error) {
	return s.Log().Len(ctx, sourcesList(threadID))
}

func sourcesList(threadID string) string { return "sources:" + threadID }
func pullsList(sourceID string) string   { return "pulls:" + sourceID }

// InsertPull records a pull (the document its events are staged under).
func (s *Store) InsertPull(ctx context.Context, p *Pull) error {
	if s.staged(p) {
		return nil
	}
	return s.insert(ctx, Pulls, p)
}

// PullSummary is what a source's pulls say of it: the latest pull, the latest pull that read
// text (nil before the first), and the latest failed one. Each pull appends the summary as it
// leaves it to the source's pulls list, so the newest entry is the source's state: one read.
type PullSummary struct {
	Latest      *Pull `bson:"latest,omitempty"`
	LatestOK    *Pull `bson:"latest_ok,omitempty"`
	LatestError *Pull `bson:"latest_error,omitempty"`
}

// AppendPull appends p to its source's pulls, with the summary it leaves after prev.
func (s *Store) AppendPull(ctx context.Context, prev PullSummary, p *Pull) error {
	next := PullSummary{Latest: p, LatestOK: prev.LatestOK, LatestError: prev.LatestError}
	q := *p
	q.Events = nil
	next.Latest = &q
	if p.Status == "ok" {
		next.LatestOK = &q
	} else {
		next.LatestError = &q
	}
	_, err := appendTo(ctx, s, pullsList(p.SourceID), next)
	return err
}

// PullSummaryOf reads a source's state: the newest entry of its pulls (empty before the first).
func (s *Store) PullSummaryOf(ctx context.Context, sourceID string) (PullSummary, error) {
	l := s.Log()
	n, err := l.Len(ctx, pullsList(sourceID))
	if err != nil || n == 0 {
		return PullSummary{}, err
	}
	e, err := mongox.Get[PullSummary](ctx, l, pullsList(sourceID), n)
	return e.Value, err
}

// Due is an entry of a due bucket: a source to pull again once its time came.
type Due struct {
	SourceID string    `bson:"source_id"`
	At       time.Time `bson:"at"`
}

// AppendDue lists a source as due at a time, in the bucket of that time.
func (s *Store) AppendDue(ctx context.Context, bucket string, d Due) error {
	_, err := appendTo(ctx, s, bucket, d)
	return err
}

// DuePage reads up to limit entries of a due bucket below position before.
func (s *Store) DuePage(ctx context.Context, bucket string, before int64, limit int) ([]mongox.Entry[Due], int64, error) {
	return mongox.Page[Due](ctx, s.Log(), bucket, before, limit)
}

// repulled lists the due buckets whose sources were all pulled, in order: its newest entry is
// where the next scan starts.
const repulled = "repulled"

// LastRepulled is the start of the latest bucket fully re-pulled (zero before the first).
func (s *Store) LastRepulled(ctx context.Context) (time.Time, error) {
	l := s.Log()
	n, err := l.Len(ctx, repulled)
	if err != nil || n == 0 {
		return time.Time{}, err
	}
	e, err := mongox.Get[time.Time](ctx, l, repulled, n)
	return e.Value, err
}

// MarkRepulled records that a bucket was fully re-pulled.
func (s *Store) MarkRepulled(ctx context.Context, bucket time.Time) error {
	_, err := appendTo(ctx, s, repulled, bucket)
	return err
}
