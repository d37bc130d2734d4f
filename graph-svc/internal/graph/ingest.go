package graph

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/apierr"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/mongox"
)

// OverviewStore reads what the ingest overview sums up besides sources.
type OverviewStore interface {
	Decisions(ctx context.Context, objectID string) (int64, *store.DecisionRef, error)
	MessageCount(ctx context.Context, threadID string) (int64, error)
	ThreadsPage(ctx context.Context, objectID string, limit int) ([]string, error)
}

// Ingest limits.
const (
	// MaxIngestURLs bounds the URLs (urls and cloud_drive_urls together) of one ingest.
	MaxIngestURLs = 20
	// previewThreads and previewNodes bound the graph previews of the ingest overview.
	previewThreads = 10
	previewNodes   = 5
)

// IngestDraft is what an owner ingests into its self-ingest thread: pages, cloud-drive files,
// a text and a note (MessageBody, the self-thread ingest's message).
type IngestDraft struct {
	URLs           []string
	CloudDriveURLs []string
	Text           string
	MessageBody    string
	Visibility     string
}

// IngestResult is what an ingest wrote.
type IngestResult struct {
	ThreadID string       `json:"thread_id"`
	Nodes    []NodeView   `json:"nodes"`
	Sources  []SourceView `json:"sources"`
}

// Ingest writes the draft into the caller's self-ingest thread: the note and the text as nodes,
// and each URL as a tracked source pulled at once (its text a node when the pull succeeds, its
// error on the source when it fails).
//
// An ingest answers within its budget (Schedule.IngestBudget), inside the gateway's timeout, so
// that its answer is always what it wrote: a turn not had within the budget is a 503 before
// anything is written; a page not fetched by the budget's end is a pull that timed out, recorded
// on its source (the schedule, or a pull by the owner, fetches it again), and the ingest answers
// 201 with every source it wrote.
func (s *Service) Ingest(ctx context.Context, requestID string, c *contract.Principal, d IngestDraft) (*IngestResult, error) {
	budget := s.Schedule.IngestBudget
	if budget <= 0 {
		budget = DefaultIngestBudget
	}
	deadline := time.Now().Add(budget)
	vis, err := visibility(d.Visibility)
	if err != nil {
		return nil, err
	}
	srcs, err := s.newSources(c, d, vis)
	if err != nil {
		return nil, err
	}
	if len(d.Text) > MaxText || len(d.MessageBody) > MaxBody {
		return nil, apierr.Errorf(http.StatusRequestEntityTooLarge, apierr.CodePayloadTooLarge,
			"text is limited to %d bytes and message_body to %d", MaxText, MaxBody)
	}
	if len(srcs) == 0 && strings.TrimSpace(d.Text) == "" && strings.TrimSpace(d.MessageBody) == "" {
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "nothing to ingest: give urls, cloud_drive_urls, text or message_body")
	}
	if len(srcs) > 0 {
		// One turn of the process's outbound work for the whole ingest, taken before anything is
		// written: its pages are fetched and read one at a time under it.
		turnCtx, cancel := context.WithDeadline(ctx, deadline)
		release, err := s.turn(turnCtx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			e := apierr.Errorf(http.StatusServiceUnavailable, apierr.CodeUnavailable,
				"this service is fetching and reading pages as much as it may at once: nothing was ingested, retry later")
			e.RetryAfter = time.Second
			return nil, e
		}
		if err != nil {
			return nil, err
		}
		defer release()
	}
	th, err := s.selfThread(ctx, c)
	if err != nil {
		return nil, err
	}
	out := &IngestResult{ThreadID: th.ID, Nodes: []NodeView{}, Sources: []SourceView{}}
	if err := s.reserveSources(ctx, c, srcs); err != nil {
		return nil, err
	}
	for _, n := range []struct{ typ, body string }{{TypeMessage, d.MessageBody}, {TypeContext, d.Text}} {
		if strings.TrimSpace(n.body) == "" {
			continue
		}
		node := &store.Node{ID: apikey.NewID("nod"), ThreadID: th.ID, Type: n.typ, Body: n.body, Visibility: vis,
			AuthorID: c.ObjectID, AuthorHash: c.Hash, CreatedAt: clock.Now()}
		if err := s.addNode(ctx, node); err != nil {
			return nil, err
		}
		out.Nodes = append(out.Nodes, nodeView(node, nil))
	}
	for i := range srcs {
		srcs[i].ThreadID = th.ID
		if err := s.Store.InsertSource(ctx, &srcs[i]); err != nil {
			return nil, err
		}
		if err := s.Store.AppendSource(ctx, &srcs[i]); err != nil {
			return nil, err
		}
		if err := s.schedule(ctx, srcs[i].ID, srcs[i].CreatedAt.Add(s.Schedule.Interval)); err != nil {
			return nil, err
		}
	}
	// The pulls run one at a time, under the ingest's turn; only their fetches stop at the deadline.
	fetchCtx := context.WithValue(ctx, fetchDeadlineKey{}, deadline)
	for i := range srcs {
		if err := s.pull(fetchCtx, requestID, &srcs[i], false); err != nil {
			return nil, err
		}
	}
	if out.Sources, err = s.sourceViews(ctx, c, srcs); err != nil {
		return nil, err
	}
	for _, v := range out.Sources {
		if v.NodeID == nil {
			continue
		}
		n, err := s.Store.Node(ctx, *v.NodeID)
		if err != nil {
			return nil, err
		}
		out.Nodes = append(out.Nodes, nodeView(n, nil))
	}
	return out, nil
}

// reserveSources takes a slot of the owner's source quota for each new source. A draft that
// cannot fit is refused before anything is written (a read of the quota's length); the slots
// themselves are claimed by inserts, so concurrent ingests never pass the quota together.
func (s *Service) reserveSources(ctx context.Context, c *contract.Principal, srcs []store.Source) error {
	if len(srcs) == 0 {
		return nil
	}
	list := sourceQuota(c.ObjectID)
	used, err := s.Store.QuotaUsed(ctx, list)
	if err != nil {
		return err
	}
	if used+int64(len(srcs)) > s.Limits.SourcesPerOwner {
		return apierr.QuotaExceeded("tracked sources per owner", s.Limits.SourcesPerOwner)
	}
	for _, src := range srcs {
		if err := s.reserve(ctx, list, s.Limits.SourcesPerOwner, src.ID, "tracked sources per owner"); err != nil {
			return err
		}
	}
	return nil
}

// sourceQuota is the quota list of the sources an object tracks.
func sourceQuota(objectID string) string { return "quota:sources:" + objectID }

// newSources checks the draft's URLs and returns the sources they become (not yet stored).
func (s *Service) newSources(c *contract.Principal, d IngestDraft, vis string) ([]store.Source, error) {
	if len(d.URLs)+len(d.CloudDriveURLs) > MaxIngestURLs {
		return nil, apierr.BadRequest(apierr.CodeInvalidRequest, "at most %d urls and cloud_drive_urls together", MaxIngestURLs)
	}
	var out []store.Source
	add := func(field string, i int, kind, raw, fetch string) error {
		if _, err := s.Fetcher.CheckURL(fetch); err != nil || len(raw) > 2048 {
			return apierr.BadRequest(apierr.CodeInvalidURL, "%s[%d] must be an absolute http(s) URL of at most 2,048 bytes on a public address", field, i)
		}
		out = append(out, store.Source{ID: apikey.NewID("src"), OwnerID: c.ObjectID, OwnerHash: c.Hash, Kind: kind,
			URL: strings.TrimSpace(raw), FetchURL: fetch, Visibility: vis, CreatedAt: clock.Now()})
		return nil
	}
	for i, raw := range d.URLs {
		if err := add("urls", i, KindURL, raw, strings.TrimSpace(raw)); err != nil {
			return nil, err
		}
	}
	for i, raw := range d.CloudDriveURLs {
		direct, err := DirectDownload(raw)
		if err != nil {
			return nil, err
		}
		if err := add("cloud_drive_urls", i, KindCloudDrive, raw, direct); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fetchDeadlineKey carries an ingest's deadline to its fetches (and only to them: what a pull
// writes is written whatever the time).
type fetchDeadlineKey struct{}

// Overview is the owner's view of what it ingested and decided. Sources is one page of the
// self-ingest thread's sources, newest first; NextCursor reads the next.
type Overview struct {
	Hash           string          `json:"hash"`
	Context        ContextSummary  `json:"context"`
	DecisionMemory DecisionSummary `json:"decision_memory"`
	SelfThread     *SelfThread     `json:"self_thread"`
	Sources        []SourceView    `json:"sources"`
	NextCursor     *string         `json:"next_cursor"`
	GraphPreviews  []GraphPreview  `json:"graph_previews,omitempty"`
}

// ContextSummary summarises the owner's composed public profile.
type ContextSummary struct {
	Title   string `json:"title"`
	Bytes   int    `json:"bytes"`
	Excerpt string `json:"excerpt"`
}

// DecisionSummary summarises the decisions recorded in the owner's threads, which its decision
// memory is rebuilt from.
type DecisionSummary struct {
	Decisions int          `json:"decisions"`
	Latest    *DecisionRef `json:"latest"`
}

// DecisionRef names one decision.
type DecisionRef struct {
	NodeID    string `json:"node_id"`
	ThreadID  string `json:"thread_id"`
	Title     string `json:"title"`
	CreatedAt string `json:"created_at"`
}

// SelfThread summarises the owner's self-ingest thread.
type SelfThread struct {
	ThreadID    string `json:"thread_id"`
	CreatedAt   string `json:"created_at"`
	NodeCount   int    `json:"node_count"`
	SourceCount int    `json:"source_count"`
}

// GraphPreview is the size and newest nodes of one of the owner's thread graphs. The counts are
// of the nodes and edges written (a decision's supersedes edges, read from the decision, are not
// counted).
type GraphPreview struct {
	ThreadID  string     `json:"thread_id"`
	NodeCount int        `json:"node_count"`
	EdgeCount int        `json:"edge_count"`
	Nodes     []NodeView `json:"latest_nodes"`
}

// excerptBytes bounds the profile excerpt of the overview.
const excerptBytes = 280

// Overview answers GET /api/ingest: the owner's hash, a summary of its context and decisions,
// its self-ingest thread, a page of the sources it tracks and, with graphs, previews of its
// newest thread graphs.
func (s *Service) Overview(ctx context.Context, c *contract.Principal, graphs bool, before string, limit int, cursor func(string) string) (*Overview, error) {
	md, err := s.Profiles.ComposedProfile(ctx, c.ObjectID, c.Hash)
	if err != nil {
		return nil, apierr.Unavailable(fmt.Errorf("read the composed profile: %w", err))
	}
	out := &Overview{Hash: c.Hash, Sources: []SourceView{},
		Context: ContextSummary{Title: contract.ProfileTitle(md), Bytes: len(md), Excerpt: truncate(md, excerptBytes)}}
	n, latest, err := s.Store.Decisions(ctx, c.ObjectID)
	if err != nil {
		return nil, err
	}
	out.DecisionMemory.Decisions = int(n)
	if latest != nil {
		out.DecisionMemory.Latest = &DecisionRef{NodeID: latest.NodeID, ThreadID: latest.ThreadID, Title: latest.Title,
			CreatedAt: clock.Format(latest.CreatedAt)}
	}
	page, err := s.sourcePage(ctx, c, SelfThreadID(c.ObjectID), before, limit, cursor)
	if err != nil {
		return nil, err
	}
	out.Sources, out.NextCursor = page.Sources, page.NextCursor
	if out.SelfThread, err = s.selfSummary(ctx, c); err != nil {
		return nil, err
	}
	if graphs {
		if out.GraphPreviews, err = s.previews(ctx, c); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (s *Service) selfSummary(ctx context.Context, c *contract.Principal) (*SelfThread, error) {
	th, err := s.Store.Thread(ctx, SelfThreadID(c.ObjectID))
	if errors.Is(err, mongox.ErrNotFound) {
		return nil, nil // nothing ingested yet
	}
	if err != nil {
		return nil, err
	}
	nodes, _, err := s.counts(ctx, th)
	if err != nil {
		return nil, err
	}
	// Every source of the self thread took a slot of its owner's source quota.
	srcs, err := s.Store.QuotaUsed(ctx, sourceQuota(c.ObjectID))
	if err != nil {
		return nil, err
	}
	return &SelfThread{ThreadID: th.ID, CreatedAt: clock.Format(th.CreatedAt), NodeCount: nodes,
		SourceCount: int(min(srcs, s.Limits.SourcesPerOwner))}, nil
}

// counts are the nodes and edges written into a thread, read from its quota and msgs lists.
func (s *Service) counts(ctx context.Context, th *store.Thread) (nodes, edges int, err error) {
	written, err := s.Store.QuotaUsed(ctx, nodeQuota(th.ID))
	if err != nil {
		return 0, 0, err
	}
	msgs, err := s.Store.MessageCount(ctx, th.ID)
	if err != nil {
		return 0, 0, err
	}
	nodes = int(min(written, s.Limits.NodesPerThread) + msgs)
	edges = int(max(msgs-1, 0))
	for _, p := range th.Participants {
		n, err := s.Store.QuotaUsed(ctx, edgeQuota(th.ID, p))
		if err != nil {
			return 0, 0, err
		}
		edges += int(min(n, s.Limits.EdgesPerAuthor))
	}
	return nodes, edges, nil
}

func (s *Service) previews(ctx context.Context, c *contract.Principal) ([]GraphPreview, error) {
	ids, err := s.Store.ThreadsPage(ctx, c.ObjectID, previewThreads)
	if err != nil {
		return nil, err
	}
	out := []GraphPreview{}
	for _, id := range ids {
		g, err := s.Graph(ctx, c, id, GraphPage{Limit: previewNodes})
		if err != nil {
			return nil, err
		}
		th, err := s.Store.Thread(ctx, id)
		if err != nil {
			return nil, err
		}
		nodes, edges, err := s.counts(ctx, th)
		if err != nil {
			return nil, err
		}
		out = append(out, GraphPreview{ThreadID: id, NodeCount: nodes, EdgeCount: edges, Nodes: g.Nodes})
	}
	return out, nil
}
