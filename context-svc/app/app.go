// Package app wires context-svc: configuration, storage, outbound clients, events and routes. It
// is public (not internal) so that the all-in-one mode can run the service in-process with the
// same wiring.
package app

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/svcdev/svc/context-svc/internal/api"
	"github.com/svcdev/svc/context-svc/internal/consumers"
	"github.com/svcdev/svc/context-svc/internal/gitsync"
	"github.com/svcdev/svc/context-svc/internal/profile"
	"github.com/svcdev/svc/context-svc/internal/store"
	"github.com/svcdev/svc/pkg/config"
	"github.com/svcdev/svc/pkg/controls"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpsig"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/outbound"
	"github.com/svcdev/svc/pkg/service"
)

// Name is the service name: its audience for internal tokens and its default database.
const Name = "context-svc"

// Limits of outbound fetches: one URL source, and one repository fetched for sync.
const (
	sourceTimeout = 10 * time.Second
	sourceBytes   = 1 << 20
	gitTimeout    = 25 * time.Second // within the gateway's 30 s upstream timeout
	gitBytes      = 32 << 20
	// A sync holds its pack and the inflated objects in memory: these bound one sync, and the
	// process's outbound limiter how many run at once (OUTBOUND_MAX_CONCURRENT × 40 MiB at worst).
	gitPackBytes    = 8 << 20
	gitInflateBytes = 32 << 20
)

// Config is context-svc's configuration.
type Config struct {
	config.Service
	config.Outbound
	// SourceRefresh is how long the fetched content of a URL source is reused.
	SourceRefresh time.Duration `env:"SOURCE_REFRESH, default=15m"`
}

// App is a running context-svc: the shared service base (Serve, Run, Close) with its routes and
// consumers.
type App struct{ *service.Base }

// New connects to the backends and builds the service.
func New(ctx context.Context, cfg Config, log *slog.Logger) (*App, error) {
	if err := service.RequireIdentityURL(cfg.Service); err != nil {
		return nil, err
	}
	signer, err := service.RequestSignerOf(cfg.Service)
	if err != nil {
		return nil, err
	}
	fetcher, err := outbound.New(outboundOptions(cfg.Outbound, sourceTimeout, sourceBytes, signer))
	if err != nil {
		return nil, err
	}
	gitClient, err := outbound.New(outboundOptions(cfg.Outbound, gitTimeout, gitBytes, signer))
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
	st := store.New(b.DB, b.Log)
	// A refreshed URL source changes llm.txt without a write: a validator lives no longer than a
	// fetched source is reused.
	etags := httpx.NewETags(b.Redis, b.Log, cfg.SourceRefresh)
	profiles := &profile.Service{
		Store:    st,
		Outbox:   b.Outbox,
		Controls: controls.New(b.Redis),
		Identity: b.Identity(),
		Signer:   b.Identity(),
		Fetcher:  fetcher,
		Git: gitsync.New(gitsync.Syncer{
			HTTP: gitClient.HTTPClient(), AllowFile: cfg.AllowPrivate, AllowPrivate: cfg.AllowPrivate, MaxFile: httpx.MaxTextBytes, Timeout: gitTimeout,
			MaxPack: gitPackBytes, MaxInflate: gitInflateBytes,
		}, limiter),
		SourceRefresh: cfg.SourceRefresh,
		Log:           b.Log,
		ETags:         etags,
	}
	api.Register(b.API, &api.Handler{Profiles: profiles, ETags: etags, BaseURL: strings.TrimRight(cfg.BaseURL, "/"),
		ServiceKey: b.RequestSigner()})
	projections := &consumers.Projections{Store: st}
	// Every projection write is keyed by what it records (a block list, a decision, a version):
	// redeliveries change nothing, so no dedupe record is read or written per event, which
	// matters since every message of the network passes through here on its way to the blocks.
	b.Consume(service.Consumer{Group: consumers.Group, Topics: consumers.Topics, Idempotent: true, Handle: projections.Handle})
	publish := func(ctx context.Context, evs []events.Pending) error { return b.Producer.Publish(ctx, evs...) }
	b.Once("admission backfill", func(ctx context.Context) error {
		n, err := st.BackfillAdmissions(ctx, publish)
		if n > 0 && err == nil {
			b.Log.Info("told mailbox-svc the admission rules of objects written by an older release", "objects", n)
		}
		return err
	})
	// Until it has run, an object's sources, links and decisions stored by an earlier release are
	// missing from their pages.
	b.Once("object ranges upgrade", func(ctx context.Context) error {
		n, err := st.Upgrade(ctx, profile.MaxSources)
		if n != (store.Carried{}) && err == nil {
			b.Log.Info("carried the sources, links and decisions of an earlier release over to their ranges",
				"sources", n.Sources, "links", n.Links, "decisions", n.Decisions)
		}
		return err
	})
	return &App{Base: b}, nil
}

func outboundOptions(c config.Outbound, timeout time.Duration, maxBytes int64, signer *httpsig.Signer) outbound.Options {
	o := outbound.FromConfig(c)
	o.Timeout, o.MaxBytes, o.Signer = timeout, maxBytes, signer
	return o
}
