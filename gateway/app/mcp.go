package app

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/gateway/internal/auth"
	"github.com/svcdev/svc/gateway/internal/mcpserver"
	"github.com/svcdev/svc/gateway/internal/proxy"
	"github.com/svcdev/svc/gateway/internal/ratelimit"
	"github.com/svcdev/svc/gateway/internal/routes"
)

// mcpVersion is the MCP server's version, as server.json and the server card name it.
const mcpVersion = "1.0.0"

// mountMCP serves the MCP server at /mcp over the engine e: its tools call the routes through e,
// the same way a REST client does.
func mountMCP(e *gin.Engine, cfg Config, served []routes.Route, a *auth.Authenticator, l *ratelimit.Limiter, keySecret []byte, log *slog.Logger) error {
	m, err := mcpserver.New(mcpserver.Options{
		Routes: served, Engine: e, Auth: a, Limiter: l, Limits: cfg.Limits, Authorize: proxy.Authorize,
		BaseURL: cfg.BaseURL, AuthorizationServer: strings.TrimRight(cfg.BaseURL, "/"), Version: mcpVersion, Log: log, KeySecret: keySecret,
	})
	if err != nil {
		return err
	}
	// POST carries every message; GET and DELETE are answered 405 by the stateless transport
	// (no stream to resume, no session to end), rather than falling through to the box page.
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		e.Handle(method, mcpserver.Path, m.Serve)
	}
	metadata := gin.WrapH(m.Metadata())
	for _, path := range []string{mcpserver.MetadataPath, mcpserver.MetadataRootPath} {
		e.GET(path, metadata)
		e.OPTIONS(path, metadata)
	}
	return nil
}
