package app

import (
	"log/slog"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/gateway/internal/auth"
	"github.com/svcdev/svc/gateway/internal/oauth"
	"github.com/svcdev/svc/gateway/internal/ratelimit"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/outbound"
)

// mountOAuth serves the OAuth authorization server of /mcp on e and makes the authenticator
// take its access tokens (on /mcp and the route calls of its tools only).
func mountOAuth(e *gin.Engine, cfg Config, a *auth.Authenticator, id *identity.Client, rdb *redis.Client, l *ratelimit.Limiter,
	seed []byte, log *slog.Logger) error {
	opts := outbound.FromConfig(cfg.Outbound)
	opts.HTTPSOnly, opts.MaxBytes, opts.MaxRedirects = true, oauth.MaxClientDocumentBytes, -1
	fetch, err := outbound.New(opts)
	if err != nil {
		return err
	}
	srv, err := oauth.New(oauth.Options{
		Issuer: cfg.BaseURL, Engine: e, Auth: a, Identity: id, Redis: rdb, Limiter: l, Limits: cfg.Limits,
		Fetch: fetch, SigningSeed: seed, AutoConsentKey: cfg.OAuthAutoConsentKey, Log: log,
	})
	if err != nil {
		return err
	}
	srv.Mount(e)
	a.AcceptTokens(srv)
	return nil
}
