package oauth

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/rpc"
)

// challengePattern is an S256 code challenge: 32 bytes, base64url without padding.
var challengePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

// authorize starts an authorization request (GET /oauth/authorize). A client id or redirect URI
// that cannot be trusted is answered on a page, never by a redirect (the redirect URI is not yet
// known to be the client's); any other mistake goes back to the client as an error response.
// A valid request is kept under a random id and the consent page asks for the owner's key.
func (s *Server) authorize(c *gin.Context) {
	if err := s.limitIP(c); err != nil {
		httpx.Abort(c, err)
		return
	}
	q := c.Request.URL.Query()
	for name, values := range q {
		if len(values) > 1 {
			s.errorPage(c, http.StatusBadRequest, "The parameter "+name+" is repeated.")
			return
		}
	}
	cl, err := s.clients.get(c.Request.Context(), q.Get("client_id"))
	if err != nil {
		var bad errClient
		if !errors.As(err, &bad) {
			s.opts.Log.WarnContext(c.Request.Context(), "oauth client not fetched", "error", err)
		}
		s.errorPage(c, http.StatusBadRequest, "This app cannot be connected: "+err.Error())
		return
	}
	redirect := q.Get("redirect_uri")
	if !cl.AllowsRedirect(redirect) {
		s.errorPage(c, http.StatusBadRequest, "This app cannot be connected: redirect_uri is not one its metadata document lists.")
		return
	}
	state := q.Get("state")
	fail := func(code, description string) {
		s.redirect(c, http.StatusFound, redirect, url.Values{"error": {code}, "error_description": {description}, "state": {state}})
	}
	if q.Get("response_type") != "code" {
		fail("unsupported_response_type", "only response_type=code is supported")
		return
	}
	if q.Get("code_challenge_method") != "S256" || !challengePattern.MatchString(q.Get("code_challenge")) {
		fail("invalid_request", "PKCE is required: code_challenge with code_challenge_method=S256")
		return
	}
	if r := q.Get("resource"); r != "" && r != s.resource {
		fail("invalid_target", "the only resource is "+s.resource)
		return
	}
	scopes, ok := parseScope(q.Get("scope"))
	if !ok {
		fail("invalid_scope", "scope must be a space-separated subset of "+strings.Join(Scopes, " "))
		return
	}
	req := &request{ClientID: cl.ID, RedirectURI: redirect, State: state, Challenge: q.Get("code_challenge"), Scopes: scopes, CSRF: randomToken()}
	if s.opts.AutoConsentKey != "" {
		s.autoConsent(c, cl, req)
		return
	}
	id := randomToken()
	if err := put(c.Request.Context(), s.opts.Redis, requestKey(id), req, RequestTTL); err != nil {
		httpx.Abort(c, httpx.Unavailable(err))
		return
	}
	s.render(c, http.StatusOK, consentView{Step: stepIdentify, Request: id, CSRF: req.CSRF, Client: cl, Scopes: scopes})
}

// parseScope reads a scope parameter: a subset of Scopes; none asks for read and write, what a
// sub-key gets by default.
func parseScope(raw string) ([]string, bool) {
	fields := strings.Fields(raw)
	if len(fields) == 0 {
		return []string{authn.ScopeRead, authn.ScopeWrite}, true
	}
	var out []string
	for _, f := range fields {
		if !slices.Contains(Scopes, f) {
			return nil, false
		}
		if !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out, true
}

// consent handles the consent page's form (POST /oauth/authorize): identify (the owner pastes
// a key, which is checked and then forgotten: only its principal is kept with the request),
// allow, or deny. Every post must carry the request's own CSRF token.
func (s *Server) consent(c *gin.Context) {
	if err := s.limitIP(c); err != nil {
		httpx.Abort(c, err)
		return
	}
	ctx := c.Request.Context()
	id := c.PostForm("request")
	var req request
	if err := get(ctx, s.opts.Redis, requestKey(id), &req); err != nil {
		s.errorPage(c, http.StatusBadRequest, "This authorization request expired or was already answered: start again from the app.")
		return
	}
	if subtle.ConstantTimeCompare([]byte(c.PostForm("csrf")), []byte(req.CSRF)) != 1 {
		s.errorPage(c, http.StatusForbidden, "This form does not belong to this authorization request.")
		return
	}
	cl, err := s.clients.get(ctx, req.ClientID)
	if err != nil {
		s.errorPage(c, http.StatusBadRequest, "This app cannot be connected: "+err.Error())
		return
	}
	switch c.PostForm("action") {
	case "deny":
		_ = s.opts.Redis.Del(ctx, requestKey(id)).Err()
		s.redirect(c, http.StatusSeeOther, req.RedirectURI, url.Values{"error": {"access_denied"}, "error_description": {"the owner declined"}, "state": {req.State}})
	case "identify":
		s.identify(c, id, cl, &req)
	case "allow":
		if req.ObjectID == "" {
			s.errorPage(c, http.StatusBadRequest, "Prove ownership with a key first.")
			return
		}
		if err := take(ctx, s.opts.Redis, requestKey(id), &req); err != nil {
			s.errorPage(c, http.StatusBadRequest, "This authorization request was already answered.")
			return
		}
		// The key that proved ownership may have been revoked since: it must still hold.
		if _, err := s.opts.Auth.ByDigest(ctx, req.ApprovedDigest, s.charge(c)); err != nil {
			if httpx.AsError(err).Status == http.StatusUnauthorized {
				s.errorPage(c, http.StatusBadRequest, "The key you pasted was revoked meanwhile: start again from the app.")
				return
			}
			httpx.Abort(c, err)
			return
		}
		s.approve(c, cl, &req)
	default:
		s.errorPage(c, http.StatusBadRequest, "Unknown action.")
	}
}

// identify checks the key the owner pasted: the owner key, or a sub-key of the object that holds
// every scope asked for (a grant never exceeds the key that approved it). The request then
// remembers the object and the approving key's id, and the page shows the box.
func (s *Server) identify(c *gin.Context, id string, cl *Client, req *request) {
	ctx := c.Request.Context()
	view := consentView{Step: stepIdentify, Request: id, CSRF: req.CSRF, Client: cl, Scopes: req.Scopes}
	key := strings.TrimSpace(c.PostForm("key"))
	p, err := s.opts.Auth.Authenticate(ctx, "Bearer "+key, s.charge(c))
	if err != nil {
		if st := httpx.AsError(err).Status; st != http.StatusUnauthorized {
			httpx.Abort(c, err)
			return
		}
		view.Problem = "That key is not valid."
		s.render(c, http.StatusBadRequest, view)
		return
	}
	if missing := missingScopes(p, req.Scopes); len(missing) > 0 {
		view.Problem = "That key does not hold the scope " + strings.Join(missing, ", ") + ": paste the owner key or a sub-key that holds it."
		s.render(c, http.StatusForbidden, view)
		return
	}
	req.ObjectID, req.ApprovedBy, req.ApprovedDigest = p.ObjectID, p.KeyID, apikey.Digest(key)
	if err := put(ctx, s.opts.Redis, requestKey(id), req, RequestTTL); err != nil {
		httpx.Abort(c, httpx.Unavailable(err))
		return
	}
	box, err := s.box(c, p, key)
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	view.Step, view.Box = stepAllow, box
	s.render(c, http.StatusOK, view)
}

// missingScopes are the scopes asked for that p does not hold.
func missingScopes(p *authn.Principal, scopes []string) []string {
	var out []string
	for _, sc := range scopes {
		if !p.HasScope(sc) {
			out = append(out, sc)
		}
	}
	return out
}

// approve makes the grant's sub-key and sends the client its code, with the issuer (RFC 9207).
func (s *Server) approve(c *gin.Context, cl *Client, req *request) {
	ctx := c.Request.Context()
	gk, err := s.opts.Identity.CreateGrantKey(ctx, req.ObjectID, contract.GrantKeyRequest{
		Label: label(cl), Scopes: req.Scopes, ApprovedBy: req.ApprovedBy})
	if err != nil {
		var status *rpc.StatusError
		if errors.As(err, &status) && status.Status < 500 {
			s.errorPage(c, status.Status, "The box could not take another key: revoke an unused sub-key and try again.")
			return
		}
		httpx.Abort(c, httpx.Unavailable(err))
		return
	}
	code := randomToken()
	g := grant{ObjectID: req.ObjectID, KeyID: gk.KeyID, Digest: gk.Digest, ClientID: cl.ID, Scopes: gk.Scopes,
		RedirectURI: req.RedirectURI, Challenge: req.Challenge}
	if err := put(ctx, s.opts.Redis, hashed("code", code), g, CodeTTL); err != nil {
		httpx.Abort(c, httpx.Unavailable(err))
		return
	}
	status := http.StatusSeeOther
	if c.Request.Method == http.MethodGet {
		status = http.StatusFound
	}
	s.redirect(c, status, req.RedirectURI, url.Values{"code": {code}, "state": {req.State}})
}

// maxLabel is identity-svc's bound on a key label (in characters).
const maxLabel = 200

// label is the grant's sub-key label: the client's name and where its document lives, cut to
// what a label holds.
func label(cl *Client) string {
	l := cl.Origin()
	if cl.Name != "" {
		l = cl.Name + " (" + l + ")"
	}
	if r := []rune(l); len(r) > maxLabel {
		l = string(r[:maxLabel])
	}
	return l
}

// redirect sends the browser to the client's redirect URI with params added to its query, and
// always the issuer (RFC 9207), so that a client talking to several servers cannot be mixed up.
func (s *Server) redirect(c *gin.Context, status int, redirectURI string, params url.Values) {
	u, err := url.Parse(redirectURI)
	if err != nil {
		s.errorPage(c, http.StatusBadRequest, "The redirect URI is not a URL.")
		return
	}
	q := u.Query()
	for k, v := range params {
		if len(v) > 0 && v[0] != "" {
			q.Set(k, v[0])
		}
	}
	q.Set("iss", s.issuer)
	u.RawQuery = q.Encode()
	c.Header("Cache-Control", "no-store")
	c.Redirect(status, u.String())
}

// autoConsent approves a request with the configured test key, without a page
// (OAUTH_TEST_AUTO_CONSENT_KEY: conformance runs only).
func (s *Server) autoConsent(c *gin.Context, cl *Client, req *request) {
	p, err := s.opts.Auth.Authenticate(c.Request.Context(), "Bearer "+s.opts.AutoConsentKey, s.charge(c))
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	if missing := missingScopes(p, req.Scopes); len(missing) > 0 {
		s.redirect(c, http.StatusFound, req.RedirectURI, url.Values{"error": {"invalid_scope"}, "state": {req.State}})
		return
	}
	req.ObjectID, req.ApprovedBy = p.ObjectID, p.KeyID
	s.approve(c, cl, req)
}
