package graph

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
)

// Source kinds and statuses.
const (
	KindURL        = "url"
	KindCloudDrive = "cloud_drive"
	StatusPending  = "pending"
	StatusOK       = "ok"
	StatusError    = "error"
)

// SourceStore keeps tracked sources, their pulls and the re-pull schedule.
type SourceStore interface {
	InsertSource(ctx context.Context, src *store.Source) error
	Source(ctx context.Context, id string) (*store.Source, error)
	AppendSource(ctx context.Context, src *store.Source) error
	SourcesPage(ctx context.Context, threadID, before string, limit int) ([]store.Item[store.Source], string, error)
	InsertPull(ctx context.Context, p *store.Pull) error
	AppendPull(ctx context.Context, prev store.PullSummary, p *store.Pull) error
	PullSummaryOf(ctx context.Context, sourceID string) (store.PullSummary, error)
	AppendDue(ctx context.Context, bucket string, d store.Due) error
	DuePage(ctx context.Context, bucket, after string, limit int) ([]store.Item[store.Due], string, error)
	LastRepulled(ctx context.Context) (time.Time, error)
	MarkRepulled(ctx context.Context, bucket time.Time) error
	Leases() mongox.Leases
	DropLease(ctx context.Context, key string) error
}

// SourceView is a tracked source as its thread's participants read it: the linked node is the
// one holding its latest text; the last error stays shown after a later success.
type SourceView struct {
	ID           string  `json:"id"`
	ThreadID     string  `json:"thread_id"`
	Kind         string  `json:"kind"`
	URL          string  `json:"url"`
	FetchURL     string  `json:"fetch_url"`
	Visibility   string  `json:"visibility"`
	Status       string  `json:"status"`
	LastPulledAt *string `json:"last_pulled_at"`
	NodeID       *string `json:"node_id"`
	LastError    *string `json:"last_error"`
	LastErrorAt  *string `json:"last_error_at"`
	CreatedAt    string  `json:"created_at"`
}

// SourcesScope is the cursor scope of a thread's source pages.
func SourcesScope(threadID string) string { return "sources:" + threadID }

// SourcePage is one page of tracked sources, newest first; NextCursor reads the next (nil on the
// last). Its fields are in the order the sources route has always answered them.
type SourcePage struct {
	NextCursor *string      `json:"next_cursor"`
	Sources    []SourceView `json:"sources"`
}

// Sources lists one page of a thread's tracked sources (cursor makes the next page's cursor of
// the key it reads before). The other side's owner_only sources are not shown.
func (s *Service) Sources(ctx context.Context, c *contract.Principal, threadID, before string, limit int, cursor func(string) string) (*SourcePage, error) {
	th, err := s.thread(ctx, threadID, c.ObjectID)
	if err != nil {
		return nil, err
	}
	return s.sourcePage(ctx, c, th.ID, before, limit, cursor)
}

func (s *Service) sourcePage(ctx context.Context, c *contract.Principal, threadID, before string, limit int, cursor func(string) string) (*SourcePage, error) {
	es, next, err := s.Store.SourcesPage(ctx, threadID, before, limit)
	if err != nil {
		return nil, err
	}
	srcs := make([]store.Source, 0, len(es))
	for _, e := range es {
		srcs = append(srcs, e.Value)
	}
	views, err := s.sourceViews(ctx, c, srcs)
	if err != nil {
		return nil, err
	}
	page := &SourcePage{Sources: views}
	if next != "" {
		page.NextCursor = contract.Optional(cursor(next))
	}
	return page, nil
}

// PullNow pulls a thread's source on its owner's demand and answers its state after the pull.
func (s *Service) PullNow(ctx context.Context, requestID string, c *contract.Principal, threadID, sourceID string) (*SourceView, error) {
	th, err := s.thread(ctx, threadID, c.ObjectID)
	if err != nil {
		return nil, err
	}
	src, err := s.Store.Source(ctx, sourceID)
	if errors.Is(err, mongox.ErrNotFound) || err == nil && (src.ThreadID != th.ID || src.OwnerID != c.ObjectID) {
		return nil, apierr.NotFound("source")
	}
	if err != nil {
		return nil, err
	}
	release, err := s.turn(ctx)
	if err != nil {
		return nil, err
	}
	err = s.pull(ctx, requestID, src, false)
	release()
	if err != nil {
		return nil, err
	}
	views, err := s.sourceViews(ctx, c, []store.Source{*src})
	if err != nil {
		return nil, err
	}
	return &views[0], nil
}

// sourceViews renders sources with their state (one read each), leaving out the other side's
// owner_only ones.
func (s *Service) sourceViews(ctx context.Context, c *contract.Principal, srcs []store.Source) ([]SourceView, error) {
	out := []SourceView{}
	for _, src := range srcs {
		if src.Visibility == OwnerOnly && src.OwnerID != c.ObjectID {
			continue
		}
		sum, err := s.Store.PullSummaryOf(ctx, src.ID)
		if err != nil {
			return nil, err
		}
		v := SourceView{ID: src.ID, ThreadID: src.ThreadID, Kind: src.Kind, URL: src.URL, FetchURL: src.FetchURL,
			Visibility: src.Visibility, Status: StatusPending, CreatedAt: clock.Format(src.CreatedAt)}
		if sum.Latest != nil {
			v.Status, v.LastPulledAt = sum.Latest.Status, clock.FormatPtr(&sum.Latest.At)
		}
		if sum.LatestOK != nil {
			v.NodeID = contract.Optional(sum.LatestOK.NodeID)
		}
		if sum.LatestError != nil {
			v.LastError, v.LastErrorAt = contract.Optional(sum.LatestError.Error), clock.FormatPtr(&sum.LatestError.At)
		}
		out = append(out, v)
	}
	return out, nil
}

// pull fetches a source once and records the pull. When the text changed (or is read for the
// first time) it becomes a new node of the source's thread, derived from the previous one and
// taking a slot of the node quotas, and the owner's context_source event reports it; the event
// is staged before the pull's insert.
func (s *Service) pull(ctx context.Context, requestID string, src *store.Source, scheduled bool) error {
	prev, err := s.Store.PullSummaryOf(ctx, src.ID)
	if err != nil {
		return err
	}
	p := &store.Pull{ID: apikey.NewID("pul"), SourceID: src.ID, Status: StatusOK, Scheduled: scheduled}
	text, ferr := s.fetchText(ctx, src.FetchURL)
	p.At = clock.Now()
	if ferr != nil {
		p.Status, p.Error = StatusError, ferr.Error()
		return s.recordPull(ctx, prev, p)
	}
	sum := sha256.Sum256([]byte(text))
	p.Digest = hex.EncodeToString(sum[:])
	if prev.LatestOK != nil && prev.LatestOK.Digest == p.Digest {
		p.NodeID = prev.LatestOK.NodeID
		return s.recordPull(ctx, prev, p)
	}
	// The change is named by the source, the node it follows and the new text: pulls racing to
	// record it (an owner's and the schedule's) insert one node and stage one event.
	prevID := ""
	if prev.LatestOK != nil {
		prevID = prev.LatestOK.NodeID
	}
	change := src.ID + "/" + prevID + "/" + p.Digest
	n := &store.Node{ID: changeNodeID(change), ThreadID: src.ThreadID, Type: TypeEvidence, Body: text, Visibility: src.Visibility,
		AuthorID: src.OwnerID, AuthorHash: src.OwnerHash, SourceID: src.ID, DerivedFrom: prevID, CreatedAt: p.At}
	if _, err := s.Store.Node(ctx, n.ID); errors.Is(err, mongox.ErrNotFound) {
		if err := s.addNode(ctx, n); errors.As(err, new(*apierr.Error)) {
			p.Status, p.Error = StatusError, "the text changed but the thread's node quota is reached"
			return s.recordPull(ctx, prev, p)
		} else if err != nil && !errors.Is(err, mongox.ErrTaken) {
			return err
		}
	} else if err != nil {
		return err
	}
	p.NodeID, p.Changed = n.ID, true
	ev := sourceEvent(change, requestID, src, p, prev.LatestOK == nil)
	p.Events = events.IDs(ev)
	if err := s.Outbox.Stage(ctx, store.Pulls, p.ID, ev); err != nil {
		return err
	}
	if err := s.Store.InsertPull(ctx, p); err != nil {
		return err
	}
	s.Outbox.Confirm(ev)
	return s.Store.AppendPull(ctx, prev, p)
}

// recordPull stores a pull that reports no change and appends it to its source's state.
func (s *Service) recordPull(ctx context.Context, prev store.PullSummary, p *store.Pull) error {
	if err := s.Store.InsertPull(ctx, p); err != nil {
		return err
	}
	return s.Store.AppendPull(ctx, prev, p)
}

// changeNodeID is the id of the node that records a source's change.
func changeNodeID(change string) string {
	sum := sha256.Sum256([]byte(change))
	return "nod_" + hex.EncodeToString(sum[:16])
}

// Re-pull schedule. Each source is listed in the due bucket of its next pull (buckets are
// PullScan wide); a scan reads the buckets that ended since the last one it finished, so it
// costs what is due, not what is tracked.
const (
	duePage = 100
	// maxBucketsPerScan bounds the (mostly empty) buckets one scan reads after a long pause; the
	// next scan goes on from there.
	maxBucketsPerScan = 288
)

// schedule lists a source as due at a time.
func (s *Service) schedule(ctx context.Context, sourceID string, at time.Time) error {
	return s.Store.AppendDue(ctx, store.DueBucket(at, s.Schedule.Scan), store.Due{SourceID: sourceID, At: at})
}

// RepullDue pulls the sources whose due bucket ended, each rescheduled an interval on before
// its pull. Every replica runs it; a source is pulled once per bucket by the replica that takes
// its lease.
func (s *Service) RepullDue(ctx context.Context) error {
	now := clock.Now()
	width := s.Schedule.Scan
	last, err := s.Store.LastRepulled(ctx)
	if err != nil {
		return err
	}
	start := now.Add(-s.Schedule.Interval - width).Truncate(width)
	if !last.IsZero() {
		start = last.Add(width)
	}
	for i := 0; i < maxBucketsPerScan && !start.Add(width).After(now); i++ {
		if err := s.repullBucket(ctx, start, now); err != nil {
			return err
		}
		if err := s.Store.MarkRepulled(ctx, start); err != nil {
			return err
		}
		if err := s.dropLeases(ctx, start.Add(-2*s.Schedule.Interval)); err != nil {
			return err
		}
		start = start.Add(width)
	}
	return nil
}

// dropLeases deletes the leases of a bucket long done (two intervals before the one just done,
// when no replica can still be pulling it), one point delete per source it listed: leases cost
// what was due, never a sweep of them all.
func (s *Service) dropLeases(ctx context.Context, bucket time.Time) error {
	return s.eachDue(ctx, bucket, func(name, sourceID string) error {
		return s.Store.DropLease(ctx, leaseKey(sourceID, name))
	})
}

// eachDue hands each source of a due bucket to fn, with the bucket's name, a page at a time,
// until fn fails.
func (s *Service) eachDue(ctx context.Context, bucket time.Time, fn func(name, sourceID string) error) error {
	name := store.DueBucket(bucket, s.Schedule.Scan)
	for after := ""; ; {
		es, next, err := s.Store.DuePage(ctx, name, after, duePage)
		if err != nil {
			return err
		}
		for _, e := range es {
			if err := fn(name, e.Value.SourceID); err != nil {
				return err
			}
		}
		if next == "" {
			return nil
		}
		after = next
	}
}

func leaseKey(sourceID, bucket string) string { return sourceID + "/" + bucket }

// repullBucket pulls the sources of one due bucket.
func (s *Service) repullBucket(ctx context.Context, bucket, now time.Time) error {
	var errs []error // one source's failure does not stop the others'
	err := s.eachDue(ctx, bucket, func(name, sourceID string) error {
		ok, err := s.Store.Leases().Take(ctx, leaseKey(sourceID, name), now.Add(2*s.Schedule.Interval))
		if err == nil && ok {
			err = s.repull(ctx, sourceID, now)
		}
		errs = append(errs, err)
		return nil
	})
	if err != nil {
		return err
	}
	return errors.Join(errs...)
}

// repull reschedules a source, then pulls it.
func (s *Service) repull(ctx context.Context, sourceID string, now time.Time) error {
	src, err := s.Store.Source(ctx, sourceID)
	if errors.Is(err, mongox.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := s.schedule(ctx, src.ID, now.Add(s.Schedule.Interval)); err != nil {
		return err
	}
	release, err := s.Limiter.Wait(ctx) // a scheduled pull waits for its turn: no caller to refuse
	if err != nil {
		return err
	}
	defer release()
	return s.pull(ctx, "", src, true)
}
