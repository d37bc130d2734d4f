// Package app wires claims-svc: configuration, storage, the verifier, events and routes. It is
// public (not internal) so that the all-in-one mode can run the service in-process with the same
// wiring.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/miekg/dns"

	"github.com/svcdev/svc/claims-svc/internal/api"
	"github.com/svcdev/svc/claims-svc/internal/claims"
	"github.com/svcdev/svc/claims-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/config"
	"github.com/svcdev/svc/pkg/outbound"
	"github.com/svcdev/svc/pkg/service"
)

// Name is the service name: its audience for internal tokens and its default database.
const Name = "claims-svc"

// Config is claims-svc's configuration.
type Config struct {
	config.Service
	config.Outbound
	// DNSResolver is the DNS server (host:port) asked for the TXT records of domain proofs; empty
	// takes the first nameserver of /etc/resolv.conf.
	DNSResolver string `env:"CLAIMS_DNS_RESOLVER"`
	// ChallengeTTL is how long a new claim may be verified.
	ChallengeTTL time.Duration `env:"CLAIMS_CHALLENGE_TTL, default=168h"`
	// RecheckInterval is how often each verified claim is looked at again; RecheckScan how often
	// each replica looks for claims due.
	RecheckInterval time.Duration `env:"CLAIMS_RECHECK_INTERVAL, default=24h"`
	RecheckScan     time.Duration `env:"CLAIMS_RECHECK_SCAN, default=5m"`
	// MaxPerObject bounds the claims one object ever creates (409 QUOTA_EXCEEDED past it).
	MaxPerObject int `env:"CLAIMS_MAX_PER_OBJECT, default=100"`
	// The profile pages of the social proofs: a handle is appended to these bases; Mastodon
	// profiles are read at <scheme>://<instance>/@<handle>, after the instance's WebFinger answer.
	GitHubURL      string `env:"CLAIMS_GITHUB_URL, default=https://github.com"`
	XURL           string `env:"CLAIMS_X_URL, default=https://x.com"`
	LinkedInURL    string `env:"CLAIMS_LINKEDIN_URL, default=https://www.linkedin.com/in"`
	RedditURL      string `env:"CLAIMS_REDDIT_URL, default=https://www.reddit.com/user"`
	MastodonScheme string `env:"CLAIMS_MASTODON_SCHEME, default=https"`
}

// App is a running claims-svc: the shared service base (Serve, Run, Close) with its routes and
// its re-check loop.
type App struct{ *service.Base }

// New connects to the backends and builds the service.
func New(ctx context.Context, cfg Config, log *slog.Logger) (*App, error) {
	if err := service.RequireIdentityURL(cfg.Service); err != nil {
		return nil, err
	}
	if cfg.RecheckInterval <= 0 || cfg.RecheckScan <= 0 || cfg.ChallengeTTL <= 0 || cfg.MaxPerObject <= 0 {
		return nil, errors.New("configuration: CLAIMS_RECHECK_INTERVAL, CLAIMS_RECHECK_SCAN, CLAIMS_CHALLENGE_TTL and CLAIMS_MAX_PER_OBJECT must be positive")
	}
	resolver, err := dnsResolver(cfg.DNSResolver)
	if err != nil {
		return nil, err
	}
	signer, err := service.RequestSignerOf(cfg.Service)
	if err != nil {
		return nil, err
	}
	opts := outbound.FromConfig(cfg.Outbound)
	opts.Signer = signer
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
	st := store.New(b.DB)
	svc := &claims.Service{
		Store: st, Identity: b.Identity(), Outbox: b.Outbox, ChallengeTTL: cfg.ChallengeTTL, Log: b.Log,
		Limiter: limiter, MaxClaims: cfg.MaxPerObject, RecheckInterval: cfg.RecheckInterval,
		Checker: &claims.Verifier{
			Resolver: resolver, Pages: pages, MastodonScheme: cfg.MastodonScheme, BaseURL: cfg.BaseURL,
			Profiles: map[string]string{claims.GitHub: cfg.GitHubURL, claims.X: cfg.XURL, claims.LinkedIn: cfg.LinkedInURL,
				claims.Reddit: cfg.RedditURL},
		},
	}
	api.Register(b.API, &api.Handler{Claims: svc})
	// Until it has run, claims stored by an earlier release are not listed, show no state or last
	// check and are not re-checked.
	b.Once("claim ranges upgrade", func(ctx context.Context) error {
		n, err := st.Upgrade(ctx, clock.Now().Truncate(cfg.RecheckInterval), cfg.MaxPerObject)
		if n > 0 && err == nil {
			b.Log.Info("carried claims of an earlier release over to their ranges", "claims", n)
		}
		return err
	})
	b.Every(cfg.RecheckScan, "re-checking claims", func(ctx context.Context) error { return svc.RecheckDue(ctx) })
	return &App{Base: b}, nil
}

// dnsResolver returns addr, or the system's first nameserver (127.0.0.1:53 when it names none).
func dnsResolver(addr string) (string, error) {
	if addr != "" {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return "", fmt.Errorf("configuration: CLAIMS_DNS_RESOLVER must be host:port: %w", err)
		}
		return addr, nil
	}
	conf, err := dns.ClientConfigFromFile("/etc/resolv.conf")
	if err != nil || len(conf.Servers) == 0 {
		return "127.0.0.1:53", nil
	}
	return net.JoinHostPort(conf.Servers[0], conf.Port), nil
}
