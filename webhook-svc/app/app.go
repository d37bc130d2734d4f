// Package app wires webhook-svc: configuration, storage, the sender, the consumer and routes. It
// is public (not internal) so that the all-in-one mode runs the service with the same wiring.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/config"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/outbound"
	"github.com/svcdev/svc/pkg/service"
	"github.com/svcdev/svc/pkg/versions"
	"github.com/svcdev/svc/webhook-svc/internal/api"
	"github.com/svcdev/svc/webhook-svc/internal/consumers"
	"github.com/svcdev/svc/webhook-svc/internal/store"
	"github.com/svcdev/svc/webhook-svc/internal/webhook"
)

// Name is the service name: its audience for internal tokens and its default database.
const Name = "webhook-svc"

// Config is webhook-svc's configuration.
type Config struct {
	config.Service
	config.Outbound
	// Timeout bounds one delivery attempt (Standard Webhooks: 15 s).
	Timeout time.Duration `env:"WEBHOOK_TIMEOUT, default=15s"`
	// RetrySchedule is the delay before each retry of a failing delivery.
	RetrySchedule string  `env:"WEBHOOK_RETRY_SCHEDULE, default=5s,5m,30m,2h,5h,10h,10h"`
	RetryJitter   float64 `env:"WEBHOOK_RETRY_JITTER, default=0.1"`
	// MaxRetryAfter caps how far an endpoint's Retry-After may push a retry.
	MaxRetryAfter time.Duration `env:"WEBHOOK_MAX_RETRY_AFTER, default=24h"`
	// Lease is how long a replica's claim on an attempt holds before another may take it over.
	Lease time.Duration `env:"WEBHOOK_CLAIM_LEASE, default=60s"`
	// DisableAfter disables a subscription whose endpoint has been failing that long.
	DisableAfter time.Duration `env:"WEBHOOK_DISABLE_AFTER, default=120h"`
	// SecretOverlap is how long a rotated-away secret keeps signing beside the new one.
	SecretOverlap time.Duration `env:"WEBHOOK_SECRET_OVERLAP, default=24h"`
	PollInterval  time.Duration `env:"WEBHOOK_POLL_INTERVAL, default=1s"`
	// CachedObjects bounds how many objects' subscription lists a replica keeps in memory.
	CachedObjects int `env:"WEBHOOK_CACHED_OBJECTS, default=10000"`
	Workers       int `env:"WEBHOOK_WORKERS, default=16"`
	// Lanes, LaneDepth and LaneQueue bound the first attempts queued in memory: subscriptions with
	// a lane, attempts queued on one lane, attempts queued in all. Past them a delivery is left to
	// the schedule, due at once.
	Lanes     int `env:"WEBHOOK_LANES, default=64"`
	LaneDepth int `env:"WEBHOOK_LANE_DEPTH, default=64"`
	LaneQueue int `env:"WEBHOOK_LANE_QUEUE, default=1024"`
	// Quotas: an owner's webhooks on its object, context subscriptions to one box (anyone's), and
	// context subscriptions one object holds.
	MaxWebhooks          int `env:"WEBHOOK_MAX_PER_OBJECT, default=25"`
	MaxContextPerBox     int `env:"WEBHOOK_MAX_CONTEXT_PER_BOX, default=100"`
	MaxContextPerWatcher int `env:"WEBHOOK_MAX_CONTEXT_PER_WATCHER, default=100"`
	// MaxContextPerWatcherPerBox bounds one object's context subscriptions to one box, so that
	// no watcher can take all of a box's places.
	MaxContextPerWatcherPerBox int `env:"WEBHOOK_MAX_CONTEXT_PER_WATCHER_PER_BOX, default=10"`
	// Retention is how long finished deliveries are kept for the delivery log.
	Retention time.Duration `env:"WEBHOOK_RETENTION, default=720h"`
}

// App is a running webhook-svc.
type App struct{ *service.Base }

// New connects to the backends and builds the service.
func New(ctx context.Context, cfg Config, log *slog.Logger) (*App, error) {
	if err := service.RequireIdentityURL(cfg.Service); err != nil {
		return nil, err
	}
	schedule, err := webhook.ParseSchedule(cfg.RetrySchedule)
	if err != nil {
		return nil, fmt.Errorf("configuration: WEBHOOK_RETRY_SCHEDULE: %w", err)
	}
	if cfg.Lease <= cfg.Timeout {
		return nil, fmt.Errorf("configuration: WEBHOOK_CLAIM_LEASE (%s) must exceed WEBHOOK_TIMEOUT (%s)", cfg.Lease, cfg.Timeout)
	}
	signer, err := service.RequestSignerOf(cfg.Service)
	if err != nil {
		return nil, err
	}
	opts := outbound.FromConfig(cfg.Outbound)
	opts.Timeout, opts.MaxRedirects, opts.HTTPSOnly, opts.MaxBytes = cfg.Timeout, -1, true, 64<<10
	opts.Signer = signer
	out, err := outbound.New(opts)
	if err != nil {
		return nil, err
	}
	b, err := service.New(ctx, Name, cfg.Service, log, service.Options{Indexes: store.Indexes})
	if err != nil {
		return nil, err
	}
	st := store.New(b.DB)
	subs := webhook.NewSubscriptionCache(st, versions.New(b.Redis, b.Log, "svc:webhook-subscriptions:", webhook.TokenTTL), cfg.CachedObjects)
	sender := &webhook.Sender{
		Store: subs, HTTP: out.HTTPClient(), Lease: cfg.Lease, DisableAfter: cfg.DisableAfter,
		Retry:        webhook.RetryStrategy{Schedule: schedule, Jitter: cfg.RetryJitter, MaxRetryAfter: cfg.MaxRetryAfter},
		PollInterval: cfg.PollInterval, Workers: cfg.Workers, Log: b.Log,
		Notices: b.Outbox, Subscribers: subs, Timeout: cfg.Timeout, Lanes: cfg.Lanes, LaneDepth: cfg.LaneDepth, LaneQueue: cfg.LaneQueue,
	}
	uses := &webhook.Subscriptions{Store: subs, URLs: out, Overlap: cfg.SecretOverlap,
		Quotas: webhook.Quotas{WebhooksPerObject: cfg.MaxWebhooks, ContextPerBox: cfg.MaxContextPerBox, ContextPerWatcher: cfg.MaxContextPerWatcher,
			ContextPerWatcherPerBox: cfg.MaxContextPerWatcherPerBox}}
	api.Register(b.API, &api.Handler{Subscriptions: uses})
	// A delivery's id is derived from the event and the subscription, so a redelivered event
	// inserts nothing new: no dedupe record is needed.
	b.Consume(service.Consumer{Group: consumers.Group, Topics: consumers.Topics,
		Batch: (&webhook.Fanout{Store: st, Subscribers: subs, Sender: sender, Objects: b.Identity()}).Handle})
	b.Go(sender.Run)
	// Until it has run, subscriptions stored by an earlier release are neither listed nor
	// delivered to.
	b.Once("listing subscriptions", func(ctx context.Context) error {
		n, err := uses.Upgrade(ctx)
		if n > 0 && err == nil {
			b.Log.Info("listed subscriptions stored by an earlier release", "subscriptions", n)
		}
		return err
	})
	// A store of an earlier release is carried over to the schedule and log ranges at start, and
	// what the older replicas still running during a rolling upgrade write is, for a while after.
	carryOver := func(ctx context.Context) error {
		n, err := st.CarryOver(mongox.Unbounded(ctx, "one-off: carrying deliveries over"), clock.Now(), upgradeWindow)
		if n > 0 && err == nil {
			b.Log.Info("carried deliveries and delivery log lines of an earlier release over", "documents", n)
		}
		return err
	}
	b.Once("carrying deliveries over", carryOver)
	b.Every(catchUpEvery, "carrying deliveries over", carryOver)
	b.Every(sweepEvery, "sweeping deliveries and claims", func(ctx context.Context) error { return sweep(ctx, st, cfg) })
	return &App{Base: b}, nil
}

// Upgrading from a release of the earlier layout: the first start carries every delivery and log
// line over, and for upgradeWindow after it each replica looks every catchUpEvery for those that
// older replicas, still running beside the new ones during a rolling upgrade, stored since.
const (
	upgradeWindow = time.Hour
	catchUpEvery  = 5 * time.Minute
)

// sweepEvery is how often old deliveries and claims are swept.
const sweepEvery = 10 * time.Minute

// sweep deletes old finished deliveries and lapsed claims (FerretDB has no TTL indexes). Every
// replica sweeps; deleting twice is harmless.
func sweep(ctx context.Context, st *store.Store, cfg Config) error {
	now := clock.Now()
	if _, err := st.SweepDeliveries(ctx, now.Add(-cfg.Retention)); err != nil {
		return err
	}
	// A claim is kept well past its lease, so that no late scan can win it a second time.
	_, err := st.SweepClaims(ctx, now.Add(-time.Hour-cfg.Lease))
	return err
}
