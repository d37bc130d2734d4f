// Package app wires feed-svc: configuration, storage, events, consumers and routes. It is public
// (not internal) so that the all-in-one mode can run the service in-process with the same wiring.
package app

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/svcdev/svc/feed-svc/internal/api"
	"github.com/svcdev/svc/feed-svc/internal/consumers"
	"github.com/svcdev/svc/feed-svc/internal/feed"
	"github.com/svcdev/svc/feed-svc/internal/network"
	"github.com/svcdev/svc/feed-svc/internal/page"
	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/feed-svc/internal/stream"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/config"
	"github.com/svcdev/svc/pkg/controls"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/rpc"
	"github.com/svcdev/svc/pkg/service"
)

// Name is the service name: its audience for internal tokens and its default database.
const Name = "feed-svc"

// Config is feed-svc's configuration.
type Config struct {
	config.Service
	// ContextURL is the internal address of context-svc, which composes the profile of the box
	// page.
	ContextURL string `env:"CONTEXT_URL, required"`
	// MailboxURL is the internal address of mailbox-svc, asked whether a box blocks a publisher
	// while feed-svc's projection of the blocks is behind a block or an unblock (pkg/controls).
	MailboxURL string `env:"MAILBOX_URL, required"`
	// CachedBlockAnswers bounds the answers of mailbox-svc each replica keeps per block version.
	CachedBlockAnswers int `env:"CACHED_BLOCK_ANSWERS, default=10000"`
	// ItemsPerDay is how many items one feed takes per UTC day from other objects, and again
	// from its owner (FEED_ITEMS_PER_DAY; past it, 429 QUOTA_EXCEEDED).
	ItemsPerDay int `env:"FEED_ITEMS_PER_DAY, default=1000"`
	// PollInterval is the max-age of feed reads: how often a poller should come back. Keep it
	// equal to the gateway's RATE_FEED_POLL_INTERVAL.
	PollInterval time.Duration `env:"FEED_POLL_INTERVAL, default=15m"`
	Streams      StreamConfig
}

// StreamConfig bounds the event streams (docs/api.md "Event streams").
type StreamConfig struct {
	// Retention is how long a stream can be resumed from an event id; RetentionEvents how many
	// events of one object (or of the network feed) are kept within it.
	Retention       time.Duration `env:"STREAM_RETENTION, default=24h"`
	RetentionEvents int64         `env:"STREAM_RETENTION_EVENTS, default=1000"`
	Heartbeat       time.Duration `env:"STREAM_HEARTBEAT, default=15s"`
	Retry           time.Duration `env:"STREAM_RETRY, default=3s"`
	// MaxOpen bounds the streams and long polls one replica serves at once.
	MaxOpen int `env:"STREAM_MAX_OPEN, default=10000"`
}

// App is a running feed-svc: the shared service base (Serve, Run, Close) with its routes and
// consumers.
type App struct{ *service.Base }

// New connects to the backends and builds the service.
func New(ctx context.Context, cfg Config, log *slog.Logger) (*App, error) {
	if err := service.RequireIdentityURL(cfg.Service); err != nil {
		return nil, err
	}
	if s := cfg.Streams; s.Retention < time.Minute || s.RetentionEvents < 1 || s.Heartbeat < time.Second || s.Retry < time.Millisecond || s.MaxOpen < 1 {
		return nil, errors.New("configuration: STREAM_RETENTION (≥1m), STREAM_RETENTION_EVENTS, STREAM_HEARTBEAT (≥1s), STREAM_RETRY and STREAM_MAX_OPEN must be positive")
	}
	if cfg.PollInterval < time.Second {
		return nil, errors.New("configuration: FEED_POLL_INTERVAL must be at least 1s")
	}
	if cfg.ItemsPerDay < 1 {
		return nil, errors.New("configuration: FEED_ITEMS_PER_DAY must be at least 1")
	}
	pages, err := page.New(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	b, err := service.New(ctx, Name, cfg.Service, log, service.Options{Indexes: store.Indexes})
	if err != nil {
		return nil, err
	}
	st := store.New(b.DB)
	ident := b.Identity()
	tags := httpx.NewFeedTags(b.Redis, log)
	// Sender blocks, authors' names, hashes and visibility come from feed-svc's projections of
	// mailbox-svc's and identity-svc's events; identity-svc is called only for the caller's hash
	// and for a publisher created moments ago (see feed.Feeds.author).
	// Right after a block or an unblock, until the projection has applied it, mailbox-svc is
	// asked instead (pkg/controls).
	ctl := controls.New(b.Redis)
	feeds := &feed.Feeds{Store: st, Outbox: b.Outbox, Identity: ident, Tags: tags, PerDay: cfg.ItemsPerDay,
		Mailbox:    rpc.NewMailboxClient(cfg.MailboxURL, b.Client("mailbox-svc")),
		BlockGuard: controls.NewGuard[bool](ctl, Name, controls.Blocks, cfg.CachedBlockAnswers)}
	logs := stream.NewLog(b.Redis, stream.Retention{Age: cfg.Streams.Retention, Max: cfg.Streams.RetentionEvents})
	hub := stream.NewHub(b.Redis, b.Log)
	b.Go(hub.Run)
	api.Register(b.API, &api.Handler{
		Feeds:   feeds,
		Network: &network.Network{Store: st},
		Boxes: &page.Boxes{Resolver: ident, Profiles: rpc.NewContextClient(cfg.ContextURL, b.Client("context-svc")),
			Store: st, Items: feeds},
		Pages:        pages,
		Tags:         tags,
		PollInterval: cfg.PollInterval,
		Streams:      stream.NewServer(logs, hub, cfg.Streams.Heartbeat, cfg.Streams.Retry, cfg.Streams.MaxOpen),
	})
	// Every projection write is keyed by the event (list appends) or guarded by its order: no
	// dedupe record is needed.
	// Its handler takes a whole fetch: it counts the fetch's messages together and
	// projects the other events several objects at once itself.
	b.Consume(service.Consumer{Group: consumers.Group, Topics: consumers.Topics,
		Batch: (&consumers.Network{Store: st, Tags: tags, Controls: ctl, Service: Name}).Handle})
	// The streams follow the pipeline in a group of their own: every public event to its
	// object's log, every feed row to the feed's log (appends are once per event id).
	b.Consume(service.Consumer{Group: consumers.StreamsGroup, Topics: stream.Topics, Batch: (&stream.Appender{Log: logs, Objects: st}).Handle})
	// Today's publishing counts of an earlier release (its quota lists) become places, so that no
	// lane gets its cap twice on the day of the upgrade; redone at each start, it inserts nothing
	// new.
	b.Once("carrying publishing quotas over", func(ctx context.Context) error {
		n, err := st.UpgradeQuotas(ctx, clock.Now())
		if n > 0 && err == nil {
			b.Log.Info("carried today's publishing places of an earlier release over", "places", n)
		}
		return err
	})
	// The lists and counters of an earlier release (mongox.Log lists in "lists") become keyed
	// lists and counters, once: the step leaves a marker, and what it inserts is keyed by data.
	b.Once("carrying the lists of an earlier release over", func(ctx context.Context) error {
		n, err := st.UpgradeLists(ctx)
		if n > 0 && err == nil {
			b.Log.Info("carried the lists of an earlier release over", "entries", n)
		}
		return err
	})
	b.Every(time.Hour, "sweeping publishing quotas", func(ctx context.Context) error {
		return st.SweepQuotas(ctx, clock.Now().UTC().Truncate(24*time.Hour))
	})
	return &App{Base: b}, nil
}
