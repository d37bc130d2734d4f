// Package app wires the gateway: configuration, the route table, authentication, rate limits,
// the OpenAPI document and /llms.txt. It is public so that the all-in-one mode runs the same
// wiring in-process.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/gateway/internal/auth"
	"github.com/svcdev/svc/gateway/internal/manual"
	"github.com/svcdev/svc/gateway/internal/mcpserver"
	"github.com/svcdev/svc/gateway/internal/openapi"
	"github.com/svcdev/svc/gateway/internal/proxy"
	"github.com/svcdev/svc/gateway/internal/ratelimit"
	"github.com/svcdev/svc/gateway/internal/routes"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/config"
	"github.com/svcdev/svc/pkg/freshness"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/server"
	"github.com/svcdev/svc/pkg/service"
)

// Name is the gateway's service name.
const Name = "gateway"

// Config is the gateway's configuration.
type Config struct {
	config.Server
	config.Redis
	config.GatewayAuth
	IdentityURL string `env:"IDENTITY_URL, required"`
	ContextURL  string `env:"CONTEXT_URL"`
	MailboxURL  string `env:"MAILBOX_URL"`
	GraphURL    string `env:"GRAPH_URL"`
	ClaimsURL   string `env:"CLAIMS_URL"`
	WebhookURL  string `env:"WEBHOOK_URL"`
	FeedURL     string `env:"FEED_URL"`
	// TrustedProxies are the CIDRs whose X-Forwarded-For is believed when finding a client's IP
	// for rate limits (for example the ingress controller's); by default none is.
	TrustedProxies []string `env:"TRUSTED_PROXIES"`
	Limits         ratelimit.Config
	// LagLimit is how far behind a consumer group may be before public writes that feed the
	// projections (messages, feed items, new objects) are refused with 503 (0: never);
	// LagGroups, when set, are the only groups ("<service>.<group>") that count.
	LagLimit  time.Duration `env:"LAG_LIMIT, default=2s"`
	LagGroups []string      `env:"LAG_GROUPS"`
	// Outbound guards the fetches of OAuth clients' metadata documents.
	Outbound config.Outbound
	// OAuthAutoConsentKey approves every OAuth authorization request with this key, without the
	// consent page: for conformance runs only, never set in production.
	OAuthAutoConsentKey string `env:"OAUTH_TEST_AUTO_CONSENT_KEY"`
}

func (c Config) upstreams() map[string]string {
	out := map[string]string{}
	for name, u := range map[string]string{
		"identity-svc": c.IdentityURL, "context-svc": c.ContextURL, "mailbox-svc": c.MailboxURL,
		"graph-svc": c.GraphURL, "claims-svc": c.ClaimsURL, "webhook-svc": c.WebhookURL, "feed-svc": c.FeedURL,
	} {
		if u != "" {
			out[name] = strings.TrimRight(u, "/")
		}
	}
	return out
}

// App is a running gateway.
type App struct {
	cfg    Config
	log    *slog.Logger
	redis  *redis.Client
	engine *gin.Engine
	auth   *auth.Authenticator
}

// New builds the gateway.
func New(ctx context.Context, cfg Config, log *slog.Logger) (*App, error) {
	if log == nil {
		log = server.NewLogger(cfg.LogLevel, Name)
	}
	if cfg.Limits.StreamsPerKey < 1 || cfg.Limits.StreamsPerIP < 1 || cfg.Limits.StreamsMax < 1 {
		return nil, fmt.Errorf("configuration: RATE_STREAMS_PER_KEY, RATE_STREAMS_PER_IP and RATE_STREAMS_MAX must be at least 1")
	}
	key, err := authn.ParseSigningKey(cfg.GatewayKey)
	if err != nil {
		return nil, fmt.Errorf("configuration: GATEWAY_JWT_KEY: %w", err)
	}
	rdb, err := service.ConnectRedis(ctx, cfg.Redis.URL)
	if err != nil {
		return nil, err
	}
	idClient := identity.NewClient(cfg.IdentityURL, &http.Client{Transport: &authn.Transport{
		Key: key, Issuer: authn.GatewayIssuer, Audience: "identity-svc", Base: service.Transport(),
	}}, rdb)
	authenticator, limiter := auth.New(idClient), ratelimit.New(rdb)
	gw, err := proxy.New(authenticator, idClient, limiter, ratelimit.NewPoller(rdb, cfg.Limits.FeedPollInterval), cfg.Limits, key, cfg.upstreams(), log)
	if err != nil {
		_ = rdb.Close()
		return nil, err
	}
	gw.ETags = httpx.NewETags(rdb, log, 0)
	gw.Streams = ratelimit.NewStreams(rdb, cfg.Limits.StreamsMax)
	gw.FeedTags = httpx.NewFeedTags(rdb, log)
	gw.Freshness = &proxy.Freshness{Reader: freshness.NewReader(rdb, cfg.LagGroups), Limit: cfg.LagLimit}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	e := httpx.NewEngine(log, httpx.NewMetrics(reg))
	if err := e.SetTrustedProxies(cfg.TrustedProxies); err != nil {
		_ = rdb.Close()
		return nil, fmt.Errorf("TRUSTED_PROXIES: %w", err)
	}
	server.MountProbes(e, reg, map[string]server.Check{
		"redis": func(ctx context.Context) error { return rdb.Ping(ctx).Err() },
	})
	local := map[string]gin.HandlerFunc{
		"GET /api/webhook-events":   func(c *gin.Context) { c.JSON(http.StatusOK, catalog) },
		"GET " + mcpserver.CardPath: func(c *gin.Context) { c.JSON(http.StatusOK, mcpserver.Card(cfg.BaseURL, mcpVersion)) },
	}
	var served []routes.Route
	for _, r := range routes.All() {
		switch {
		case r.Service == routes.Gateway:
			e.Handle(r.Method, routes.GinPath(r.Path), gw.Local(r, local[r.Method+" "+r.Path]))
		case gw.Serves(r):
			e.Handle(r.Method, routes.GinPath(r.Path), gw.Handler(r))
		default:
			continue
		}
		served = append(served, r)
	}
	doc := openapi.Build(served, cfg.BaseURL)
	e.GET("/openapi.json", func(c *gin.Context) { c.JSON(http.StatusOK, doc) })
	llms := []byte(manual.Write(cfg.BaseURL, served, cfg.Limits))
	e.GET("/llms.txt", func(c *gin.Context) { c.Data(http.StatusOK, "text/plain; charset=utf-8", llms) })
	if err := mountMCP(e, cfg, served, authenticator, limiter, key.Derive("mcp idempotency keys"), log); err != nil {
		_ = rdb.Close()
		return nil, err
	}
	if err := mountOAuth(e, cfg, authenticator, idClient, rdb, limiter, key.Derive("oauth access tokens"), log); err != nil {
		_ = rdb.Close()
		return nil, err
	}
	return &App{cfg: cfg, log: log, redis: rdb, engine: e, auth: authenticator}, nil
}

// catalog is the answer of GET /api/webhook-events, built once.
var catalog = routes.Catalog()

// Serve serves on ln until ctx ends; beside it, the replica applies the key revocations that
// are announced (auth.Listen) until its drain is over.
func (a *App) Serve(ctx context.Context, ln net.Listener) error {
	return server.Serve(ctx, ln, a.engine, a.cfg.ShutdownTimeout, a.log, func(ctx context.Context) error {
		a.auth.Listen(ctx, a.redis, a.log)
		return nil
	})
}

// Run listens on the configured address and serves.
func (a *App) Run(ctx context.Context) error { return server.Run(ctx, a.cfg.Addr, a.Serve) }

// Close releases the connections.
func (a *App) Close() { _ = a.redis.Close() }
