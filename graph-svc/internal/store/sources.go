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
	return mongox.Insert(ctx, s.c(Sources), src)
}

// Source reads a source; mongox.ErrNotFound if there is none.
func (s *Store) Source(ctx context.Context, id string) (*Source, error) {
	return byID[Source](ctx, s, Sources, id)
}

// SourcesScope is the range of a thread's tracked sources.
func SourcesScope(threadID string) string { return mongox.Scope("s", keyText(threadID)) }

// AppendSource lists a stored source in its thread's sources, at its creation time.
func (s *Store) AppendSource(ctx context.Context, src *Source) error {
	return s.put(ctx, SourcesScope(src.ThreadID)+mongox.Key(mongox.Time(src.CreatedAt), keyText(src.ID)), src.CreatedAt, *src)
}

// SourcesPage reads up to limit of a thread's sources, newest first, before the key before (""
// from the newest): one find. It returns the key the next page reads before ("" on the last).
func (s *Store) SourcesPage(ctx context.Context, threadID, before string, limit int) ([]Item[Source], string, error) {
	return newest[Source](ctx, s, SourcesScope(threadID), before, limit)
}

// InsertPull records a pull (the document its events are staged under).
func (s *Store) InsertPull(ctx context.Context, p *Pull) error {
	return mongox.Insert(ctx, s.c(Pulls), p)
}

// PullSummary is what a source's pulls say of it: the latest pull, the latest pull that read
// text (nil before the first), and the latest failed one. Each pull adds the summary as it
// leaves it to the source's states, so the newest is the source's state: one read.
type PullSummary struct {
	Latest      *Pull `bson:"latest,omitempty"`
	LatestOK    *Pull `bson:"latest_ok,omitempty"`
	LatestError *Pull `bson:"latest_error,omitempty"`
}

func statesScope(sourceID string) string { return mongox.Scope("u", keyText(sourceID)) }

// AppendPull adds p to its source's states, with the summary it leaves after prev.
func (s *Store) AppendPull(ctx context.Context, prev PullSummary, p *Pull) error {
	q := *p
	q.Events = nil
	next := PullSummary{Latest: &q, LatestOK: prev.LatestOK, LatestError: prev.LatestError}
	if p.Status == "ok" {
		next.LatestOK = &q
	} else {
		next.LatestError = &q
	}
	return s.put(ctx, statesScope(p.SourceID)+mongox.Key(mongox.Time(p.At), keyText(p.ID)), p.At, next)
}

// PullSummaryOf reads a source's state: the newest of its states (empty before the first).
func (s *Store) PullSummaryOf(ctx context.Context, sourceID string) (PullSummary, error) {
	items, err := page[PullSummary](ctx, s, mongox.Range{Scope: statesScope(sourceID), Desc: true, Limit: 1})
	if err != nil || len(items) == 0 {
		return PullSummary{}, err
	}
	return items[0].Value, nil
}

// Due is an element of a due bucket: a source to pull again once its time came.
type Due struct {
	SourceID string    `bson:"source_id"`
	At       time.Time `bson:"at"`
}

// DueBucket names the time bucket of a due time (due times are grouped by width): the range of
// its sources.
func DueBucket(at time.Time, width time.Duration) string {
	return mongox.Scope("d", mongox.Time(at.Truncate(width)))
}

// AppendDue lists a source as due at a time, in the bucket of that time.
func (s *Store) AppendDue(ctx context.Context, bucket string, d Due) error {
	return s.put(ctx, bucket+mongox.Key(mongox.Time(d.At), keyText(d.SourceID)), d.At, d)
}

// DuePage reads up to limit elements of a due bucket after the key after ("" from its start):
// one find. It returns the key the next page reads after ("" on the last).
func (s *Store) DuePage(ctx context.Context, bucket, after string, limit int) ([]Item[Due], string, error) {
	items, err := page[Due](ctx, s, mongox.Range{Scope: bucket, After: after, Limit: limit})
	if err != nil || len(items) < limit || len(items) == 0 {
		return items, "", err
	}
	return items, items[len(items)-1].Key, nil
}

// repulledScope is the range of the due buckets whose sources were all pulled, by time: its
// newest is where the next scan starts.
var repulledScope = mongox.Scope("r")

// LastRepulled is the start of the latest bucket fully re-pulled (zero before the first).
func (s *Store) LastRepulled(ctx context.Context) (time.Time, error) {
	items, err := page[time.Time](ctx, s, mongox.Range{Scope: repulledScope, Desc: true, Limit: 1})
	if err != nil || len(items) == 0 {
		return time.Time{}, err
	}
	return items[0].Value, nil
}

// MarkRepulled records that a bucket was fully re-pulled.
func (s *Store) MarkRepulled(ctx context.Context, bucket time.Time) error {
	return s.put(ctx, repulledScope+mongox.Time(bucket), bucket, bucket)
}
