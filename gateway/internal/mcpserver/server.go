// Package mcpserver serves svc to MCP clients at /mcp: Streamable HTTP, stateless (each POST
// stands alone, so any gateway replica answers it), with one tool per chosen route of the
// gateway's table. A tool call is an in-process HTTP request of its route through the gateway's
// own engine, so that MCP and REST share one code path: authentication, scopes, rate limits,
// idempotency and internal tokens.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/sync/semaphore"

	keyauth "github.com/svcdev/svc/gateway/internal/auth"
	"github.com/svcdev/svc/gateway/internal/ratelimit"
	"github.com/svcdev/svc/gateway/internal/routes"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/httpx"
)

// Path is where the server is mounted; MetadataPath serves its protected-resource metadata
// (RFC 9728), which the WWW-Authenticate header of a 401 points to.
const (
	Path         = "/mcp"
	MetadataPath = "/.well-known/oauth-protected-resource/mcp"
)

// Authenticator turns an Authorization header into a principal (the gateway's auth package).
type Authenticator interface {
	Authenticate(ctx context.Context, header string, charge keyauth.Charge) (*authn.Principal, error)
}

// Limiter applies a rate limit (the gateway's ratelimit package).
type Limiter interface {
	Allow(ctx context.Context, lim ratelimit.Limit, key string) error
}

// Options are what the server is built from.
type Options struct {
	// Routes are the routes the gateway serves; a tool whose route is not among them is left out.
	Routes []routes.Route
	// Engine serves the routes: a tool call is a request of it.
	Engine  http.Handler
	Auth    Authenticator
	Limiter Limiter
	Limits  ratelimit.Config
	// Authorize is the gateway's scope check of a route for a principal (nil target): tools/list
	// shows the tools whose route it admits.
	Authorize func(routes.Route, *authn.Principal, *authn.Target) error
	// BaseURL's scheme is the scheme of the resource URL the metadata names; BaseURL + Path is
	// the resource OAuth access tokens must be issued for (RFC 8707).
	BaseURL string
	// AuthorizationServer is the issuer of the OAuth authorization server the metadata names
	// ("" names none).
	AuthorizationServer string
	Version             string
	Log                 *slog.Logger
	// KeySecret keys the Idempotency-Keys derived from a call's content (the same on every
	// replica), so that no one else can compute another caller's key.
	KeySecret []byte
}

// Handler serves /mcp.
type Handler struct {
	opts  Options
	tools map[string]boundTool
	mcp   http.Handler
	// answers bounds, process-wide, the bytes that tool answers hold while they are built and
	// sent (see reserve).
	answers *semaphore.Weighted
}

// boundTool is a tool with the route it calls.
type boundTool struct {
	Tool
	route      routes.Route
	bodyFields map[string]bool
	// anonymous is the tool as tools/list shows it to a caller without a key, when that differs
	// (a field that defaults to the caller's own hash is required then); nil when it does not.
	anonymous *mcp.Tool
}

// New builds the server over the gateway's engine.
func New(opts Options) (*Handler, error) {
	if opts.Engine == nil || opts.Auth == nil || opts.Limiter == nil || opts.Authorize == nil || opts.Log == nil || len(opts.KeySecret) == 0 {
		return nil, errors.New("mcpserver: Engine, Auth, Limiter, Authorize, Log and KeySecret are required")
	}
	h := &Handler{opts: opts, tools: map[string]boundTool{}, answers: semaphore.NewWeighted(AnswerBudgetBytes)}
	served := map[string]routes.Route{}
	for _, r := range opts.Routes {
		served[r.Method+" "+r.Path] = r
	}
	named := routes.Schemas()
	srv := mcp.NewServer(&mcp.Implementation{Name: "svc", Title: "svc", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: Instructions,
		Capabilities: Capabilities(),
		// tools/list depends on the key presented: a cache must keep it to that client.
		SetCacheable: func(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
			if _, ok := req.(*mcp.ListToolsRequest); ok {
				c.CacheScope = "private"
			}
		},
	})
	for _, t := range Tools {
		r, ok := served[t.Route]
		if !ok {
			continue
		}
		tool, bt, err := describe(t, r, named)
		if err != nil {
			return nil, err
		}
		h.tools[t.Name] = bt
		srv.AddTool(tool, h.toolHandler(bt))
	}
	srv.AddReceivingMiddleware(h.filterList)
	h.mcp = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:    true,
		JSONResponse: true,
		// The gateway's limit on bodies: no tool takes more than a route does.
		MaxRequestBodyBytes: httpx.MaxBodyBytes,
	})
	return h, nil
}

// Capabilities are what initialize and server/discover declare: every feature the server
// answers, and only those. The SDK answers prompts/list, resources/list,
// resources/templates/list and resources/read on any server, and logging/setLevel on the
// pre-2026-07-28 wire, whatever it declares; svc offers no prompts or resources (its lists are
// empty, and a read of any URI is "Resource not found") and sends no log messages at any level,
// but a client may only call what is declared, so the features it answers are declared too.
// completion/complete and resources/subscribe are not answered (the SDK serves them only with a
// handler), so completions and subscribe are not declared; nor is listChanged, as the tools,
// prompts and resources of a build never change while it runs.
func Capabilities() *mcp.ServerCapabilities {
	return &mcp.ServerCapabilities{
		Tools:     &mcp.ToolCapabilities{},
		Prompts:   &mcp.PromptCapabilities{},
		Resources: &mcp.ResourceCapabilities{},
		Logging:   &mcp.LoggingCapabilities{},
	}
}

// describe builds the MCP tool of t over its route.
func describe(t Tool, r routes.Route, named map[string]routes.Schema) (*mcp.Tool, boundTool, error) {
	in, err := inputSchema(t, r, named)
	if err != nil {
		return nil, boundTool{}, err
	}
	out, err := outputSchema(t, r, named)
	if err != nil {
		return nil, boundTool{}, err
	}
	fields := map[string]bool{}
	props, _ := named[r.Request]["properties"].(map[string]any) // none without a request body
	for k := range props {
		fields[k] = true
	}
	destructive, openWorld := t.Destructive, t.OpenWorld
	tool := &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: in, OutputSchema: out,
		Annotations: &mcp.ToolAnnotations{Title: t.Title, ReadOnlyHint: t.ReadOnly, DestructiveHint: &destructive,
			IdempotentHint: t.Idempotent, OpenWorldHint: &openWorld}}
	bt := boundTool{Tool: t, route: r, bodyFields: fields}
	anon, err := anonymousInputSchema(t, r, named)
	if err != nil {
		return nil, boundTool{}, err
	}
	if anon != nil {
		a := *tool
		a.InputSchema = anon
		bt.anonymous = &a
	}
	return tool, bt, nil
}

// filterList leaves in tools/list the tools whose route the caller's key may call.
func (h *Handler) filterList(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		list, ok := res.(*mcp.ListToolsResult)
		if err != nil || !ok {
			return res, err
		}
		c := callerFrom(ctx)
		out := *list
		out.Tools = []*mcp.Tool{}
		for _, t := range list.Tools {
			bt, ok := h.tools[t.Name]
			if !ok || c == nil || !h.allowed(bt.route, c.principal) {
				continue
			}
			if c.principal == nil && bt.anonymous != nil {
				t = bt.anonymous
			}
			out.Tools = append(out.Tools, t)
		}
		return &out, nil
	}
}

// allowed reports whether tools/list shows r's tool to p (nil: no key), by the gateway's own
// check. A public write (send_message) is shown to a key only with the write scope: REST still
// takes it from a read-only key, as from anyone, but a read-only key is not meant to act.
func (h *Handler) allowed(r routes.Route, p *authn.Principal) bool {
	if r.Auth == routes.Public {
		return p == nil || r.Method == http.MethodGet || p.HasScope(authn.ScopeWrite)
	}
	return p != nil && h.opts.Authorize(r, p, nil) == nil
}

// Serve authenticates the request as the gateway authenticates any request, answers a missing or
// bad key on a tool that needs one with 401 and WWW-Authenticate, and hands the request to the
// SDK's Streamable HTTP handler.
func (h *Handler) Serve(c *gin.Context) {
	ctx := c.Request.Context()
	msg, err := peek(c.Request)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	// An OAuth access token is taken here, and by the routes the tools call, only when it was
	// issued for this resource.
	ctx = keyauth.WithResource(ctx, strings.TrimRight(h.opts.BaseURL, "/")+Path)
	header := c.GetHeader("Authorization")
	var p *authn.Principal
	if header != "" {
		// As for any request with a key: the per-IP limit pays for refused keys and lookups only.
		lim := ratelimit.Limit{Name: "auth-ip", PerMin: h.opts.Limits.AuthIPPerMin, Burst: h.opts.Limits.AuthIPBurst}
		client := ratelimit.ClientKey(c.ClientIP())
		charge := func(ctx context.Context) error { return h.opts.Limiter.Allow(ctx, lim, client) }
		if p, err = h.opts.Auth.Authenticate(ctx, header, charge); err != nil {
			h.unauthorized(c, err, true)
			return
		}
	} else if t, ok := h.tools[msg.toolName()]; ok && msg.Method == "tools/call" && t.route.Auth != routes.Public {
		h.unauthorized(c, httpx.Unauthorized("the tool "+t.Name+" needs an API key: Authorization: Bearer <api_key>"), false)
		return
	}
	if t, ok := h.tools[msg.toolName()]; ok && msg.Method == "tools/call" && p != nil && keyauth.IsAccessToken(bearerOf(header)) {
		if err := h.stepUp(c, t, p); err != nil {
			return
		}
	}
	// A tool call pays its route's limits when the route runs; every other message pays what a
	// REST request of the same caller pays.
	if msg.Method != "tools/call" {
		if err := h.limit(ctx, c.ClientIP(), p); err != nil {
			httpx.Abort(c, err)
			return
		}
	}
	cl := &caller{header: c.Request.Header.Clone(), remoteAddr: c.Request.RemoteAddr, principal: p}
	cl.header.Set(httpx.HeaderRequestID, httpx.RequestID(c))
	// The answer's bytes stay reserved until the SDK has written it.
	defer cl.release()
	w := &shapedErrors{ResponseWriter: c.Writer}
	h.mcp.ServeHTTP(w, c.Request.WithContext(withCaller(ctx, cl)))
	w.finish(c)
}

func (h *Handler) limit(ctx context.Context, ip string, p *authn.Principal) error {
	l := h.opts.Limits
	if p == nil {
		return h.opts.Limiter.Allow(ctx, ratelimit.Limit{Name: "public", PerMin: l.PublicPerMin, Burst: l.PublicBurst}, ratelimit.ClientKey(ip))
	}
	return h.opts.Limiter.Allow(ctx, ratelimit.Limit{Name: "owner", PerMin: l.OwnerPerMin, Burst: l.OwnerBurst}, ratelimit.ObjectKey(p.ObjectID))
}

// unauthorized answers 401 the way MCP's authorization spec asks: WWW-Authenticate names the
// protected-resource metadata. Errors other than a refused key (a limit, an outage) keep their
// own status.
func (h *Handler) unauthorized(c *gin.Context, err error, presented bool) {
	if httpx.AsError(err).Status == http.StatusUnauthorized {
		v := fmt.Sprintf("Bearer resource_metadata=%q, scope=%q", h.resourceURL(c.Request, MetadataPath), allScopes)
		if presented {
			v += `, error="invalid_token"`
		}
		c.Header("WWW-Authenticate", v)
	}
	httpx.Abort(c, err)
}

// resourceURL is the absolute URL of path on the host the client called, with the scheme of the
// configured base URL (a TLS-terminating ingress in front of the gateway).
func (h *Handler) resourceURL(r *http.Request, path string) string {
	scheme := "http"
	if strings.HasPrefix(h.opts.BaseURL, "https://") {
		scheme = "https"
	}
	return scheme + "://" + r.Host + path
}

// Metadata serves the protected-resource metadata (RFC 9728) of /mcp: the bearer token is an
// API key or an access token of the gateway's authorization server, which it names.
func (h *Handler) Metadata() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var servers []string
		if h.opts.AuthorizationServer != "" {
			servers = []string{h.opts.AuthorizationServer}
		}
		auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
			Resource:               h.resourceURL(r, Path),
			AuthorizationServers:   servers,
			BearerMethodsSupported: []string{"header"},
			ScopesSupported:        []string{authn.ScopeRead, authn.ScopeWrite, authn.ScopeMailbox},
			ResourceName:           "svc",
			ResourceDocumentation:  h.resourceURL(r, "/llms.txt"),
		}).ServeHTTP(w, r)
	})
}

// message is what the handler reads of a JSON-RPC message before the SDK does.
type message struct {
	Method string `json:"method"`
	Params struct {
		Name string `json:"name"`
	} `json:"params"`
}

func (m *message) toolName() string { return m.Params.Name }

// errBatch refuses a JSON-RPC batch. MCP dropped batches in its 2025-06-18 revision; accepting
// them from older clients let one request carry any number of calls past the per-request limits.
func errBatch() error {
	return httpx.BadRequest(httpx.CodeInvalidRequest, "JSON-RPC batches are not accepted: send one message per request")
}

// peek reads the method and tool name of a POSTed message and puts the body back; a batch is
// refused whatever the protocol version; any other body that is not one JSON-RPC object is the
// SDK's to answer.
func peek(r *http.Request) (*message, error) {
	var m message
	if r.Method != http.MethodPost || r.Body == nil {
		return &m, nil
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, httpx.MaxBodyBytes+1))
	if err != nil {
		return nil, httpx.BadRequest(httpx.CodeInvalidJSON, "could not read the request body")
	}
	if len(raw) > httpx.MaxBodyBytes {
		return nil, httpx.TooLarge(httpx.MaxBodyBytes)
	}
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		return nil, errBatch()
	}
	r.Body = io.NopCloser(bytes.NewReader(raw))
	_ = json.Unmarshal(raw, &m)
	return &m, nil
}
