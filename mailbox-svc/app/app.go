// Package app wires mailbox-svc: configuration, storage, events and routes. It is public (not
// internal) so that the all-in-one mode can run the service in-process with the same wiring.
package app

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/svcdev/svc/mailbox-svc/internal/api"
	"github.com/svcdev/svc/mailbox-svc/internal/consumers"
	"github.com/svcdev/svc/mailbox-svc/internal/mailbox"
	"github.com/svcdev/svc/mailbox-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/config"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/controls"
	"github.com/svcdev/svc/pkg/rpc"
	"github.com/svcdev/svc/pkg/service"
	"github.com/svcdev/svc/pkg/versions"
)

// Name is the service name: its audience for internal tokens and its default database.
const Name = "mailbox-svc"

// Config is mailbox-svc's configuration.
type Config struct {
	config.Service
	// ContextURL is the internal address of context-svc, asked for a recipient's rules while
	// mailbox-svc's projection of them is behind a rules write (pkg/controls).
	ContextURL string `env:"CONTEXT_URL, required"`
	// CachedRuleAnswers bounds the answers of context-svc each replica keeps per rules version.
	CachedRuleAnswers int `env:"CACHED_RULE_ANSWERS, default=10000"`
	// IdempotencyTTL is how long an Idempotency-Key is remembered.
	IdempotencyTTL time.Duration `env:"IDEMPOTENCY_TTL, default=24h"`
	// CachedBlockPairs bounds the (recipient, sender) block answers each replica keeps.
	CachedBlockPairs int `env:"CACHED_BLOCK_PAIRS, default=100000"`
	// CachedAdmissions bounds the recipients whose admission rules each replica keeps.
	CachedAdmissions int `env:"CACHED_ADMISSIONS, default=100000"`
	// SignatureSkew bounds how far a signed send's signed_at may be from the server's time.
	SignatureSkew time.Duration `env:"SIGNATURE_MAX_SKEW, default=5m"`
	// SweepInterval is how often expired idempotency keys and signature nonces are deleted.
	SweepInterval time.Duration `env:"IDEMPOTENCY_SWEEP_INTERVAL, default=10m"`
}

// tokenTTL bounds how long a recipient's cached block answers and admission rules can outlive a
// write whose token replacement failed (Redis unreachable at that moment).
const tokenTTL = 5 * time.Minute

// App is a running mailbox-svc: the shared service base (Serve, Run, Close) with its routes and
// consumers.
type App struct{ *service.Base }

// New connects to the backends and builds the service.
func New(ctx context.Context, cfg Config, log *slog.Logger) (*App, error) {
	if err := service.RequireIdentityURL(cfg.Service); err != nil {
		return nil, err
	}
	b, err := service.New(ctx, Name, cfg.Service, log, service.Options{
		Indexes: store.Indexes,
	})
	if err != nil {
		return nil, err
	}
	st := store.New(b.DB)
	ctl := controls.New(b.Redis)
	names := &mailbox.Names{Store: st, Identity: b.Identity(), Log: b.Log}
	blocked := mailbox.NewBlockCache(versions.New(b.Redis, b.Log, "svc:mailbox-blocks:", tokenTTL), cfg.CachedBlockPairs)
	admissions := mailbox.NewAdmissionCache(versions.New(b.Redis, b.Log, "svc:mailbox-admission:", tokenTTL), cfg.CachedAdmissions)
	sender := &mailbox.Sender{Store: st, Names: names, Outbox: b.Outbox,
		IdempotencyTTL: cfg.IdempotencyTTL, Blocked: blocked, Admissions: admissions, Log: b.Log,
		Signing: b.Identity(), SignatureSkew: cfg.SignatureSkew, BaseURL: strings.TrimRight(cfg.BaseURL, "/"),
		Rules:      rpc.NewContextClient(cfg.ContextURL, b.Client("context-svc")),
		RulesGuard: controls.NewGuard[contract.Admission](ctl, Name, controls.Rules, cfg.CachedRuleAnswers)}
	api.Register(b.API, &api.Handler{
		Sender:  sender,
		Threads: &mailbox.Threads{Store: st, Names: names},
		Blocks:  &mailbox.Blocks{Store: st, Names: names, Outbox: b.Outbox, Cache: blocked, Controls: ctl},
		Tasks:   &mailbox.Tasks{Store: st, Names: names},
	})
	b.Consume(service.Consumer{Group: consumers.HashesGroup, Topics: consumers.HashesTopics, Handle: (&consumers.Hashes{Store: st}).Handle})
	// Idempotent by its writes (an insert, and an update conditioned on the version): no dedupe
	// record per event.
	b.Consume(service.Consumer{Group: consumers.AdmissionsGroup, Topics: consumers.AdmissionTopics, Idempotent: true,
		Handle: (&consumers.Admissions{Store: st, Cache: admissions, Controls: ctl, Service: Name}).Handle})
	// Threads, messages and mailboxes stored by a release before data-keyed lists are carried
	// over once, beside serving (a request that meets such a thread carries it over first).
	b.Once("layout upgrade", func(ctx context.Context) error {
		n, err := st.Upgrade(ctx)
		if n > 0 && err == nil {
			b.Log.Info("carried over the threads stored by an older release", "threads", n)
		}
		return err
	})
	b.Consume(service.Consumer{Group: consumers.WebhookNoticesGroup, Topics: consumers.WebhookNoticesTopics,
		Handle: (&consumers.WebhookNotices{Sender: sender, Hashes: st}).Handle})
	// Every replica sweeps expired idempotency keys (FerretDB has no TTL indexes); deleting twice
	// is harmless.
	b.Every(cfg.SweepInterval, "sweeping idempotency keys", func(ctx context.Context) error {
		if _, err := st.SweepIdempotency(ctx, clock.Now()); err != nil {
			return err
		}
		_, err := st.SweepNonces(ctx, clock.Now())
		return err
	})
	return &App{Base: b}, nil
}
