// Package app wires graph-svc: configuration, storage, the mailbox client, events and routes. It
// is public (not internal) so that the all-in-one mode can run the service in-process with the
// same wiring.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/svcdev/svc/graph-svc/internal/api"
	"github.com/svcdev/svc/graph-svc/internal/consumers"
	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/graph-svc/internal/store"
	"github.com/svcdev/svc/pkg/config"
	"github.com/svcdev/svc/pkg/controls"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/outbound"
	"github.com/svcdev/svc/pkg/rpc"
	"github.com/svcdev/svc/pkg/service"
)

// Name is the service name: its audience for internal tokens and its default database.
const Name = "graph-svc"

// Config is graph-svc's configuration.
type Config struct {
	config.Service
	config.Outbound
	// MailboxURL is the internal address of mailbox-svc, asked who takes part in a thread graph-svc
	// has not heard of yet;
	// ContextURL that of context-svc, asked for the composed profile the ingest overview sums up.
	MailboxURL string `env:"MAILBOX_URL, required"`
	ContextURL string `env:"CONTEXT_URL, required"`
	// CachedBlockAnswers bounds the answers of mailbox-svc each replica keeps per block version
	// (asked while the projection of the blocks is behind a block or an unblock).
	CachedBlockAnswers int `env:"CACHED_BLOCK_ANSWERS, default=10000"`
	// FetchMaxBytes caps a fetched page; PullInterval is how often each tracked source is pulled
	// again, PullScan how often each replica looks for sources due.
	FetchMaxBytes int64         `env:"GRAPH_FETCH_MAX_BYTES, default=2097152"`
	PullInterval  time.Duration `env:"GRAPH_PULL_INTERVAL, default=6h"`
	PullScan      time.Duration `env:"GRAPH_PULL_SCAN, default=5m"`
	// IngestBudget bounds an ingest's wait and fetches so that it answers inside the gateway's
	// timeout (httpx.UpstreamTimeout) with what it wrote.
	IngestBudget time.Duration `env:"GRAPH_INGEST_BUDGET, default=20s"`
	// Quotas of what callers write (docs/operations.md).
	MaxNodesPerThread int64 `env:"GRAPH_MAX_NODES_PER_THREAD, default=10000"`
	MaxNodesPerAuthor int64 `env:"GRAPH_MAX_NODES_PER_AUTHOR, default=5000"`
	MaxEdgesPerAuthor int64 `env:"GRAPH_MAX_EDGES_PER_AUTHOR, default=10000"`
	MaxNodeBytes      int   `env:"GRAPH_MAX_NODE_BYTES, default=65536"`
	MaxSources        int64 `env:"GRAPH_MAX_SOURCES_PER_OWNER, default=200"`
}

// App is a running graph-svc: the shared service base (Serve, Run, Close) with its routes and
// its consumer.
type App struct{ *service.Base }

// New connects to the backends and builds the service.
func New(ctx context.Context, cfg Config, log *slog.Logger) (*App, error) {
	if cfg.IngestBudget <= 0 || cfg.IngestBudget > httpx.UpstreamTimeout-5*time.Second {
		return nil, fmt.Errorf("configuration: GRAPH_INGEST_BUDGET must be positive and at most %s, inside the gateway's timeout", httpx.UpstreamTimeout-5*time.Second)
	}
	if cfg.FetchMaxBytes <= 0 || cfg.PullInterval <= 0 || cfg.PullScan <= 0 {
		return nil, errors.New("configuration: GRAPH_FETCH_MAX_BYTES, GRAPH_PULL_INTERVAL and GRAPH_PULL_SCAN must be positive")
	}
	limits := graph.Limits{NodesPerThread: cfg.MaxNodesPerThread, NodesPerAuthor: cfg.MaxNodesPerAuthor,
		EdgesPerAuthor: cfg.MaxEdgesPerAuthor, NodeBytes: cfg.MaxNodeBytes, SourcesPerOwner: cfg.MaxSources}
	if limits.NodesPerThread <= 0 || limits.NodesPerAuthor <= 0 || limits.EdgesPerAuthor <= 0 || limits.SourcesPerOwner <= 0 ||
		limits.NodeBytes <= 0 || limits.NodeBytes > graph.MaxBody {
		return nil, errors.New("configuration: GRAPH_MAX_* quotas must be positive, GRAPH_MAX_NODE_BYTES at most 65536")
	}
	signer, err := service.RequestSignerOf(cfg.Service)
	if err != nil {
		return nil, err
	}
	opts := outbound.FromConfig(cfg.Outbound)
	opts.MaxBytes, opts.Signer = cfg.FetchMaxBytes, signer
	pages, err := outbound.New(opts)
	if err != nil {
		return nil, err
	}
	limiter, err := outbound.NewLimiter(outbound.LimiterFromConfig(cfg.Outbound))
	if err != nil {
		return nil, err
	}
	b, err := service.New(ctx, Name, cfg.Service, log, service.Options{Indexes: store.Indexes})
	if err != nil {
		return nil, err
	}
	ctl := controls.New(b.Redis)
	st := store.New(b.DB)
	svc := &graph.Service{
		Limits: limits, Schedule: graph.Schedule{Interval: cfg.PullInterval, Scan: cfg.PullScan, IngestBudget: cfg.IngestBudget},
		Store: st, Mailbox: rpc.NewMailboxClient(cfg.MailboxURL, b.Client("mailbox-svc")),
		Profiles: rpc.NewContextClient(cfg.ContextURL, b.Client("context-svc")), Outbox: b.Outbox,
		Fetcher: pages, Limiter: limiter, MaxFetchBytes: cfg.FetchMaxBytes, Log: b.Log,
		BlockGuard: controls.NewGuard[bool](ctl, Name, controls.Blocks, cfg.CachedBlockAnswers),
	}
	// An index written by an earlier release is carried over once, beside serving: until it is,
	// searches find what was indexed since the upgrade.
	// Participation marks of what earlier releases stored, so that a decision of the other side
	// in a thread the owner answered before the upgrade still reaches its decision memory.
	b.Once("participation upgrade", st.UpgradeTookPart)
	// The lists of earlier releases (graph_log) are carried over to the data-keyed ones once.
	b.Once("lists upgrade", st.UpgradeLists)
	// The memory index of earlier releases is carried over to postings, and postings written
	// before they carried the index's stats and their nodes' validity facts are completed, in
	// that order (the first's postings need the second).
	b.Once("memory index upgrade", func(ctx context.Context) error {
		if err := st.UpgradeMemory(ctx, graph.MaxIndexedStems); err != nil {
			return err
		}
		return st.UpgradePostings(ctx)
	})
	// The object hashes projected before copies of them were kept beside the memory index are
	// copied there once; until then a search reads those from the projection, one find more.
	b.Once("object hash copies upgrade", st.UpgradeHashCopies)
	api.Register(b.API, &api.Handler{Graph: svc})
	// The projection's writes are inserts keyed by the message: no dedupe record is needed.
	b.Consume(service.Consumer{Group: consumers.Group, Topics: consumers.Topics,
		Batch: (&consumers.Messages{Graph: svc, Controls: ctl, Service: Name}).Handle})
	b.Consume(service.Consumer{Group: consumers.HashGroup, Topics: consumers.HashTopics, Handle: (&consumers.Hashes{Graph: svc}).Handle})
	b.Every(cfg.PullScan, "re-pulling sources", func(ctx context.Context) error { return svc.RepullDue(ctx) })
	return &App{Base: b}, nil
}
