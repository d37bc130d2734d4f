package graph

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
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

// Sources lists a thread's tracked sources. The other side's owner_only sources are not shown.
func (s *Service) Sources(ctx context.Context, c Caller, threadID string) ([]SourceView, error) {
	th, err := s.thread(ctx, threadID, c.ObjectID)
	if err != nil {
		return nil, err
	}
	srcs, err := s.Store.SourcesOf(ctx, th.ID)
	if err != nil {
		return nil, err
	}
	return s.sourceViews(ctx, c, srcs)
}

// PullNow pulls a thread's source on its owner's demand and answers its state after the pull.
func (s *Service) PullNow(ctx context.Context, requestID string, c Caller, threadID, sourceID string) (*SourceView, error) {
	th, err := s.thread(ctx, threadID, c.ObjectID)
	if err != nil {
		return nil, err
	}
	src, err := s.Store.Source(ctx, sourceID)
	if errors.Is(err, mongox.ErrNotFound) || err == nil && (src.ThreadID != th.ID || src.OwnerID != c.ObjectID) {
		return nil, httpx.NotFound("source")
	}
	if err != nil {
		return nil, err
	}
	if err := s.pull(ctx, requestID, src, false); err != nil {
		return nil, err
	}
	views, err := s.sourceViews(ctx, c, []store.Source{*src})
	if err != nil {
		return nil, err
	}
	return &views[0], nil
}

// sourceViews renders sources with their pulls, leaving out the other side's owner_only ones.
func (s *Service) sourceViews(ctx context.Context, c Caller, srcs []store.Source) ([]SourceView, error) {
	ids := make([]string, 0, len(srcs))
	for _, src := range srcs {
		ids = append(ids, src.ID)
	}
	sums, err := s.Store.PullSummaries(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := []SourceView{}
	for _, src := range srcs {
		if src.Visibility == OwnerOnly && src.OwnerID != c.ObjectID {
			continue
		}
		sum := sums[src.ID]
		v := SourceView{ID: src.ID, ThreadID: src.ThreadID, Kind: src.Kind, URL: src.URL, FetchURL: src.FetchURL,
			Visibility: src.Visibility, Status: StatusPending, CreatedAt: clock.Format(src.CreatedAt)}
		if sum.Latest != nil {
			v.Status, v.LastPulledAt = sum.Latest.Status, clock.FormatPtr(&sum.Latest.At)
		}
		if sum.LatestOK != nil {
			v.NodeID = optional(sum.LatestOK.NodeID)
		}
		if sum.LatestError != nil {
			v.LastError, v.LastErrorAt = optional(sum.LatestError.Error), clock.FormatPtr(&sum.LatestError.At)
		}
		out = append(out, v)
	}
	return out, nil
}

// pull fetches a source once and records the pull. When the text changed (or is read for the
// first time) it becomes a new node of the source's thread, derived from the previous one, and
// the owner's context_source event reports it; the event is staged before the pull's insert.
func (s *Service) pull(ctx context.Context, requestID string, src *store.Source, scheduled bool) error {
	sums, err := s.Store.PullSummaries(ctx, []string{src.ID})
	if err != nil {
		return err
	}
	prev := sums[src.ID].LatestOK
	p := &store.Pull{ID: apikey.NewID("pul"), SourceID: src.ID, Status: StatusOK, Scheduled: scheduled}
	text, ferr := s.fetchText(ctx, src.FetchURL)
	p.At = clock.Now()
	if ferr != nil {
		p.Status, p.Error = StatusError, ferr.Error()
		return s.Store.InsertPull(ctx, p)
	}
	sum := sha256.Sum256([]byte(text))
	p.Digest = hex.EncodeToString(sum[:])
	if prev != nil && prev.Digest == p.Digest {
		p.NodeID = prev.NodeID
		return s.Store.InsertPull(ctx, p)
	}
	// The change is named by the source, the node it follows and the new text: pulls racing to
	// record it (an owner's and the schedule's) insert one node and stage one event.
	prevID := ""
	if prev != nil {
		prevID = prev.NodeID
	}
	change := src.ID + "/" + prevID + "/" + p.Digest
	n := &store.Node{ID: changeNodeID(change), ThreadID: src.ThreadID, Type: TypeEvidence, Body: text, Visibility: src.Visibility,
		AuthorID: src.OwnerID, AuthorHash: src.OwnerHash, SourceID: src.ID, CreatedAt: p.At}
	if err := s.Store.InsertNode(ctx, n); err != nil && !errors.Is(err, mongox.ErrTaken) {
		return err
	}
	if prev != nil {
		e := &store.Edge{ID: fmt.Sprintf("edg_%s_%s", n.ID, prev.NodeID), ThreadID: src.ThreadID, From: n.ID, To: prev.NodeID,
			Type: "derived_from", AuthorID: src.OwnerID, AuthorHash: src.OwnerHash, SourceID: src.ID, CreatedAt: p.At}
		if err := s.Store.AddEdge(ctx, e); err != nil {
			return err
		}
	}
	p.NodeID, p.Changed = n.ID, true
	ev := sourceEvent(change, requestID, src, p, prev == nil)
	p.Events = events.IDs(ev)
	if err := s.Outbox.Stage(ctx, store.Pulls, p.ID, ev); err != nil {
		return err
	}
	if err := s.Store.InsertPull(ctx, p); err != nil {
		return err
	}
	s.Outbox.Confirm(ev)
	return nil
}

// changeNodeID is the id of the node that records a source's change.
func changeNodeID(change string) string {
	sum := sha256.Sum256([]byte(change))
	return "nod_" + hex.EncodeToString(sum[:16])
}

// RepullDue pulls every source whose latest pull is older than interval (a source without a
// pull, once it is that old). Every replica runs it; a source is pulled once per period by the
// replica that takes its lease.
func (s *Service) RepullDue(ctx context.Context, interval time.Duration) error {
	now := clock.Now()
	if err := s.Store.Leases().Sweep(ctx, now); err != nil {
		return err
	}
	srcs, err := s.Store.AllSources(ctx)
	if err != nil || len(srcs) == 0 {
		return err
	}
	ids := make([]string, 0, len(srcs))
	for _, src := range srcs {
		ids = append(ids, src.ID)
	}
	sums, err := s.Store.PullSummaries(ctx, ids)
	if err != nil {
		return err
	}
	period := now.Truncate(interval)
	var errs []error
	for i := range srcs {
		src := &srcs[i]
		last := sums[src.ID].Latest
		if last != nil && now.Sub(last.At) < interval {
			continue
		}
		// A new source's first pull is its ingest's own, made as it is created: a scan between the
		// two must not pull it as well. One whose first pull never came is pulled an interval on.
		if last == nil && now.Sub(src.CreatedAt) < interval {
			continue
		}
		ok, err := s.Store.Leases().Take(ctx, src.ID+"/"+clock.Format(period), period.Add(2*interval))
		if err != nil || !ok {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, s.pull(ctx, "", src, true))
	}
	return errors.Join(errs...)
}
