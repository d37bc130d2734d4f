package oauth

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/oauth2"

	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
)

// verifierPattern is a PKCE code verifier (RFC 7636 §4.1).
var verifierPattern = regexp.MustCompile(`^[A-Za-z0-9._~-]{43,128}$`)

// tokenError answers the token endpoint's error shape (RFC 6749 §5.2).
func tokenError(c *gin.Context, status int, code, description string) {
	c.JSON(status, gin.H{"error": code, "error_description": description})
}

// token serves the token endpoint: a code (with its PKCE verifier) or a refresh token for an
// access token and a new refresh token. Clients are public: client_id names the client, and
// the code's verifier or the refresh token's possession is the proof.
func (s *Server) token(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
	c.Header("Pragma", "no-cache")
	if err := s.limitIP(c); err != nil {
		httpx.Abort(c, err)
		return
	}
	if err := c.Request.ParseForm(); err != nil || !strings.HasPrefix(c.ContentType(), "application/x-www-form-urlencoded") {
		tokenError(c, http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded")
		return
	}
	if _, _, basic := c.Request.BasicAuth(); basic {
		tokenError(c, http.StatusUnauthorized, "invalid_client", "clients are public: send client_id, no credentials")
		return
	}
	form := c.Request.PostForm
	for name, values := range form {
		if len(values) > 1 {
			tokenError(c, http.StatusBadRequest, "invalid_request", "the parameter "+name+" is repeated")
			return
		}
	}
	// A headless client is named by its assertion's iss; every other client by client_id.
	if form.Get("client_id") == "" && form.Get("grant_type") != "client_credentials" {
		tokenError(c, http.StatusUnauthorized, "invalid_client", "client_id is required")
		return
	}
	if r := form.Get("resource"); r != "" && r != s.resource {
		tokenError(c, http.StatusBadRequest, "invalid_target", "the only resource is "+s.resource)
		return
	}
	switch form.Get("grant_type") {
	case "authorization_code":
		s.redeemCode(c)
	case "refresh_token":
		s.refresh(c)
	case "client_credentials":
		s.clientCredentials(c)
	default:
		tokenError(c, http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code, refresh_token or client_credentials")
	}
}

// redeemCode exchanges a code once: it is taken (deleted) before anything is checked, so a
// wrong verifier or redirect URI spends it, and a replay finds nothing.
func (s *Server) redeemCode(c *gin.Context) {
	form := c.Request.PostForm
	var g grant
	if err := take(c.Request.Context(), s.opts.Redis, hashed("code", form.Get("code")), &g); err != nil {
		s.grantError(c, err, "the code is unknown, used or expired")
		return
	}
	verifier := form.Get("code_verifier")
	switch {
	case form.Get("client_id") != g.ClientID:
		tokenError(c, http.StatusBadRequest, "invalid_grant", "the code was issued to another client")
	case form.Get("redirect_uri") != g.RedirectURI:
		tokenError(c, http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorization request's")
	case !verifierPattern.MatchString(verifier) ||
		subtle.ConstantTimeCompare([]byte(oauth2.S256ChallengeFromVerifier(verifier)), []byte(g.Challenge)) != 1:
		tokenError(c, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code challenge")
	default:
		g.RedirectURI, g.Challenge = "", ""
		if s.grantActive(c, &g) {
			s.issue(c, &g, true)
		}
	}
}

// refresh rotates a refresh token: the presented one is taken (deleted), and only while the
// grant's sub-key is still active is a new pair issued.
func (s *Server) refresh(c *gin.Context) {
	ctx := c.Request.Context()
	form := c.Request.PostForm
	var g grant
	presented := form.Get("refresh_token")
	if err := take(ctx, s.opts.Redis, hashed("refresh", presented), &g); err != nil {
		if errors.Is(err, errGone) {
			s.reused(c, presented)
		}
		s.grantError(c, err, "the refresh token is unknown, used or expired")
		return
	}
	// Remembered as used for as long as it could have lived: presented again, it ends the grant.
	if err := put(ctx, s.opts.Redis, hashed("used", presented), g, RefreshTTL); err != nil {
		httpx.Abort(c, httpx.Unavailable(err))
		return
	}
	if form.Get("client_id") != g.ClientID {
		tokenError(c, http.StatusBadRequest, "invalid_grant", "the refresh token was issued to another client")
		return
	}
	notGranted := func(sc string) bool { return !slices.Contains(g.Scopes, sc) }
	if requested, ok := parseScope(form.Get("scope")); form.Get("scope") != "" && (!ok || slices.ContainsFunc(requested, notGranted)) {
		tokenError(c, http.StatusBadRequest, "invalid_scope", "a refresh cannot add scopes to the grant")
		return
	}
	if !s.grantActive(c, &g) {
		return
	}
	s.issue(c, &g, true)
}

// grantActive asks identity-svc whether the grant's sub-key is still active, which also records
// its use: a grant's last_used_at in the keys list is at least its last token issue (its
// tokens' calls are answered from the caches, as a sub-key's are). Otherwise it answers the
// error and reports false.
func (s *Server) grantActive(c *gin.Context, g *grant) bool {
	_, err := s.opts.Identity.LookupKey(c.Request.Context(), g.Digest)
	switch {
	case errors.Is(err, identity.ErrNotFound), errors.Is(err, identity.ErrRevoked):
		tokenError(c, http.StatusBadRequest, "invalid_grant", "the grant was revoked")
		return false
	case err != nil:
		httpx.Abort(c, httpx.Unavailable(err))
		return false
	}
	return true
}

func (s *Server) grantError(c *gin.Context, err error, description string) {
	if errors.Is(err, errGone) {
		tokenError(c, http.StatusBadRequest, "invalid_grant", description)
		return
	}
	httpx.Abort(c, httpx.Unavailable(err))
}

// issue answers an access token for g and, with refresh, a new refresh token, stored hashed.
func (s *Server) issue(c *gin.Context, g *grant, refresh bool) {
	access, err := s.mint(g, time.Now())
	if err != nil {
		httpx.Abort(c, err)
		return
	}
	body := gin.H{"access_token": access, "token_type": "Bearer", "expires_in": int(AccessTTL.Seconds()), "scope": strings.Join(g.Scopes, " ")}
	if refresh {
		token := "svc_rt_" + randomToken()
		if err := put(c.Request.Context(), s.opts.Redis, hashed("refresh", token), g, RefreshTTL); err != nil {
			httpx.Abort(c, httpx.Unavailable(err))
			return
		}
		body["refresh_token"] = token
	}
	c.JSON(http.StatusOK, body)
}

// reused ends the grant of a refresh token that was already rotated away: two parties hold it,
// so one of them stole it (OAuth 2.1 §4.3.1). The grant's sub-key is revoked, which refuses
// every token of the grant, the thief's and the client's, until the owner approves again.
func (s *Server) reused(c *gin.Context, presented string) {
	ctx := c.Request.Context()
	var g grant
	if err := take(ctx, s.opts.Redis, hashed("used", presented), &g); err != nil {
		return
	}
	if err := s.opts.Identity.RevokeGrantKey(ctx, g.ObjectID, g.KeyID); err != nil {
		s.opts.Log.ErrorContext(ctx, "oauth grant not revoked after its refresh token was reused", "key_id", g.KeyID, "error", err)
		return
	}
	s.opts.Log.WarnContext(ctx, "oauth refresh token reused: grant revoked", "key_id", g.KeyID, "client_id", g.ClientID)
}
