// Package proxy serves the route table: for each route it applies rate limits, authenticates the
// key, resolves the {hash} of the path, checks ownership and scope, mints the internal token for
// the target service and forwards the request over a pooled connection.
package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/gateway/internal/auth"
	"github.com/svcdev/svc/gateway/internal/ratelimit"
	"github.com/svcdev/svc/gateway/internal/routes"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
)

// Resolver resolves hashes.
type Resolver interface {
	Resolve(ctx context.Context, hash string) (*identity.Object, error)
}

// Gateway forwards routes to services.
type Gateway struct {
	auth      *auth.Authenticator
	resolver  Resolver
	limiter   *ratelimit.Limiter
	poller    *ratelimit.Poller
	limits    ratelimit.Config
	key       *authn.SigningKey
	upstreams map[string]*httputil.ReverseProxy
	// streams are the proxies of stream routes: no response header timeout (a long poll answers
	// after its wait) and small copy buffers (a stream holds one while it lasts).
	streams map[string]*httputil.ReverseProxy
	log     *slog.Logger
	// Streams caps open streams per key and per replica; nil: no cap.
	Streams *ratelimit.Streams
	// ETags, when set, lets the gateway answer an anonymous revalidation of a cacheable route
	// with 304 itself, from the validator the services keep (see httpx.ETags).
	ETags *httpx.ETags
	// FeedTags, when set, lets the gateway answer a revalidation of a polled feed with 304 and
	// refuse an early poll without forwarding it (see httpx.FeedTags).
	FeedTags *httpx.FeedTags
	// Freshness, when set, holds back the Backpressure routes while a projection is behind.
	Freshness *Freshness
}

// New returns a gateway forwarding to the services at upstreams (service name → base URL, or
// several comma-separated URLs of replicas).
func New(a *auth.Authenticator, r Resolver, l *ratelimit.Limiter, p *ratelimit.Poller, limits ratelimit.Config, key *authn.SigningKey,
	upstreams map[string]string, log *slog.Logger) (*Gateway, error) {
	g := &Gateway{auth: a, resolver: r, limiter: l, poller: p, limits: limits, key: key, log: log,
		upstreams: map[string]*httputil.ReverseProxy{}, streams: map[string]*httputil.ReverseProxy{}}
	transport := &http.Transport{
		Proxy:                 nil,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   512,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: httpx.UpstreamTimeout,
	}
	streamTransport := transport.Clone()
	streamTransport.ResponseHeaderTimeout = 0
	streamTransport.WriteBufferSize, streamTransport.ReadBufferSize = 1024, 4096
	for name, raw := range upstreams {
		var targets []*url.URL
		for _, one := range strings.Split(raw, ",") {
			target, err := url.Parse(strings.TrimSpace(one))
			if err != nil || target.Host == "" {
				return nil, fmt.Errorf("upstream %s: bad URL %q", name, one)
			}
			targets = append(targets, target)
		}
		var next atomic.Uint64
		g.upstreams[name] = &httputil.ReverseProxy{
			// Several URLs are served round robin; in Kubernetes one Service URL balances instead.
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(targets[next.Add(1)%uint64(len(targets))])
				pr.SetXForwarded()
			},
			// The gateway already answers with the request id; the service's copy would repeat it.
			ModifyResponse: func(resp *http.Response) error {
				resp.Header.Del(httpx.HeaderRequestID)
				if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
					resp.Header.Set("Retry-After", upstreamRetryAfter)
				}
				g.releasePoll(resp.Request, resp.StatusCode)
				return nil
			},
			Transport:    transport,
			ErrorHandler: g.upstreamError,
		}
		stream := *g.upstreams[name]
		stream.Transport, stream.BufferPool = streamTransport, streamBuffers
		g.streams[name] = &stream
	}
	return g, nil
}

// Serves reports whether the gateway has an upstream for the route's service.
func (g *Gateway) Serves(r routes.Route) bool { return g.upstreams[r.Service] != nil }

// upstreamRetryAfter is the Retry-After of a 503 the gateway answers for a service it cannot
// reach, or that a service answered without one: every 503 says when to retry.
const upstreamRetryAfter = "1"

func (g *Gateway) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	g.releasePoll(r, http.StatusServiceUnavailable)
	if !errors.Is(err, context.Canceled) {
		g.log.Warn("upstream unavailable", "request_id", httpx.RequestIDFrom(r.Context()), "error", err)
	}
	w.Header().Set("Retry-After", upstreamRetryAfter)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusServiceUnavailable)
	_ = json.NewEncoder(w).Encode(httpx.Body{Error: httpx.BodyError{
		Code: httpx.CodeUnavailable, Message: "the service is unavailable, retry later", RequestID: httpx.RequestIDFrom(r.Context()),
	}})
}

// Handler returns the Gin handler of one route.
func (g *Gateway) Handler(r routes.Route) gin.HandlerFunc {
	upstream := g.upstreams[r.Service]
	return func(c *gin.Context) {
		anonymous := c.GetHeader("Authorization") == ""
		if r.Backpressure {
			if err := g.Freshness.Admit(c.Request.Context()); err != nil {
				httpx.Abort(c, err)
				return
			}
		}
		p, t, err := g.admit(c, r)
		if err != nil {
			httpx.Abort(c, err)
			return
		}
		if done, err := g.pollFirst(c, r, p, t); err != nil || done {
			if err != nil {
				httpx.Abort(c, err)
			}
			return
		}
		if r.Stream {
			g.serveStream(c, r, p)
			return
		}
		if r.Cacheable && anonymous && t != nil && t.Visibility == contract.Public && g.ETags != nil &&
			g.ETags.NotModified(c, t.ObjectID) {
			return
		}
		upstream.ServeHTTP(c.Writer, c.Request)
	}
}

// admit runs every check of the route and, on success, leaves the request ready to forward.
func (g *Gateway) admit(c *gin.Context, r routes.Route) (*authn.Principal, *authn.Target, error) {
	ctx := c.Request.Context()
	// No route takes a body over MaxBodyBytes: refuse a larger declared one before any work,
	// rather than forward it for the service to refuse.
	if c.Request.ContentLength > httpx.MaxBodyBytes {
		return nil, nil, httpx.TooLarge(httpx.MaxBodyBytes)
	}
	if err := g.limitPublic(c, r); err != nil {
		return nil, nil, err
	}
	var p *authn.Principal
	header := c.GetHeader("Authorization")
	c.Request.Header.Del("Authorization") // the key never travels past the gateway
	if r.Auth != routes.Public || header != "" {
		// The per-IP budget pays for refused keys and lookups only: a key answered from a cache
		// never spends it, so bad keys from an address cannot lock out a good key from it.
		client := ratelimit.ClientKey(c.ClientIP())
		charge := func(ctx context.Context) error {
			return g.limiter.Allow(ctx, ratelimit.Limit{Name: "auth-ip", PerMin: g.limits.AuthIPPerMin, Burst: g.limits.AuthIPBurst}, client)
		}
		var err error
		if p, err = g.auth.Authenticate(ctx, header, charge); err != nil {
			return nil, nil, err
		}
		if err := g.limiter.Allow(ctx, ratelimit.Limit{Name: "owner", PerMin: g.limits.OwnerPerMin, Burst: g.limits.OwnerBurst}, ratelimit.ObjectKey(p.ObjectID)); err != nil {
			return nil, nil, err
		}
	}
	var t *authn.Target
	if hash := c.Param("hash"); hash != "" {
		obj, err := g.resolver.Resolve(ctx, hash)
		switch {
		case errors.Is(err, identity.ErrNotFound):
			return nil, nil, httpx.NotFound("object")
		case err != nil:
			return nil, nil, httpx.Unavailable(err)
		}
		t = &authn.Target{ObjectID: obj.ObjectID, Hash: obj.Hash, Visibility: obj.Visibility}
	}
	if err := Authorize(r, p, t); err != nil {
		return nil, nil, err
	}
	tok, err := g.key.MintFor(authn.GatewayIssuer, r.Service, p, t, httpx.RequestID(c), authn.ClientDigest(c.ClientIP()))
	if err != nil {
		return nil, nil, err
	}
	c.Request.Header.Set("Authorization", "Bearer "+tok)
	return p, t, nil
}

// Authorize checks that p may call r on t (nil: a route without {hash}, or only the scopes).
func Authorize(r routes.Route, p *authn.Principal, t *authn.Target) error {
	if r.Auth == routes.Public {
		return nil
	}
	if t != nil && t.ObjectID != p.ObjectID && r.Auth != routes.AnyKey {
		return notOwner(t, p)
	}
	if r.Auth == routes.OwnerKey && !p.Owner {
		return httpx.Forbidden(httpx.CodeInsufficientScope, "this route needs the owner key, not a sub-key")
	}
	if !p.HasScope(r.Scope()) {
		return httpx.Forbidden(httpx.CodeInsufficientScope, "this key lacks the "+r.Scope()+" scope")
	}
	if r.Mailbox && !p.HasScope(authn.ScopeMailbox) {
		return httpx.Forbidden(httpx.CodeInsufficientScope, "this key lacks the mailbox scope")
	}
	return nil
}

// notOwner refuses a key on another object's owner route: 404 for an object p may not learn of
// (contract.Visible), 403 for one it may.
func notOwner(t *authn.Target, p *authn.Principal) error {
	if !contract.Visible(t.Visibility, t.ObjectID, p.Viewer()) {
		return httpx.NotFound("object")
	}
	return httpx.Forbidden(httpx.CodeForbidden, "this key does not own the object")
}

// limitPublic applies the per-IP limits of public routes and the per-recipient limit of ingress.
func (g *Gateway) limitPublic(c *gin.Context, r routes.Route) error {
	if r.Auth != routes.Public {
		return nil
	}
	ctx, ip := c.Request.Context(), c.ClientIP()
	lim := ratelimit.Limit{Name: "public", PerMin: g.limits.PublicPerMin, Burst: g.limits.PublicBurst}
	if r.Ingress {
		switch r.Path {
		case "/api/objects":
			lim = ratelimit.Limit{Name: "objects", PerMin: g.limits.ObjectsPerMin, Burst: g.limits.ObjectsBurst}
		default:
			lim = ratelimit.Limit{Name: "messages", PerMin: g.limits.MessagesPerMin, Burst: g.limits.MessagesBurst}
		}
	}
	if err := g.limiter.Allow(ctx, lim, ratelimit.ClientKey(ip)); err != nil {
		return err
	}
	if r.Recipient == "" {
		return nil
	}
	recipient := c.Param("hash")
	if r.Recipient != routes.RecipientTarget {
		var err error
		recipient, err = peekField(c, r.Recipient)
		if err != nil || recipient == "" {
			return err // a body without the field is the service's to refuse
		}
	}
	// Every hash of an object (a previous one, a custom one) shares the object's budget.
	obj, err := g.resolver.Resolve(ctx, recipient)
	if err != nil {
		return nil // an unknown recipient is the service's to refuse; an outage is no reason to
	}
	return g.limiter.Allow(ctx, ratelimit.Limit{Name: "recipient", PerMin: g.limits.RecipientPerMin, Burst: g.limits.RecipientBurst}, obj.ObjectID)
}

// peekField reads one string field of a JSON body and puts the body back for the service.
func peekField(c *gin.Context, field string) (string, error) {
	raw, err := io.ReadAll(io.LimitReader(c.Request.Body, httpx.MaxBodyBytes+1))
	if err != nil {
		return "", httpx.BadRequest(httpx.CodeInvalidJSON, "could not read the request body")
	}
	if len(raw) > httpx.MaxBodyBytes {
		return "", httpx.TooLarge(httpx.MaxBodyBytes)
	}
	c.Request.Body = io.NopCloser(bytes.NewReader(raw))
	c.Request.ContentLength = int64(len(raw))
	// field may name a nested member, its path dotted (message.metadata.to_hash).
	for _, name := range strings.Split(field, ".") {
		var fields map[string]json.RawMessage
		if json.Unmarshal(raw, &fields) != nil {
			return "", nil
		}
		// The services decode keys as encoding/json does, case-insensitively, and refuse a key
		// that differs from a field only by case: so does the gateway, which looks the field up
		// exactly.
		for key := range fields {
			if key != name && strings.EqualFold(key, name) {
				return "", httpx.BadRequest(httpx.CodeUnknownField, "unknown field %q: field names are case-sensitive", key)
			}
		}
		raw = fields[name]
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return "", nil
	}
	return strings.TrimSpace(v), nil
}
