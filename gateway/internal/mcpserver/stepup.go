package mcpserver

import (
	"fmt"
	"strings"

	"github.com/gin-gonic/gin"

	keyauth "github.com/svcdev/svc/gateway/internal/auth"
	"github.com/svcdev/svc/gateway/internal/routes"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/httpx"
)

// MetadataRootPath is the protected-resource metadata at the well-known root (RFC 9728 §3), for
// clients that look there before the path-suffixed MetadataPath.
const MetadataRootPath = "/.well-known/oauth-protected-resource"

// allScopes is the scope a 401 asks for: every scope a grant may hold.
var allScopes = strings.Join([]string{authn.ScopeRead, authn.ScopeWrite, authn.ScopeMailbox}, " ")

// bearerOf is the credential of an Authorization header.
func bearerOf(header string) string {
	b, _ := keyauth.Bearer(header)
	return b
}

// neededScopes are the scopes a tool's route needs of a sub-key.
func neededScopes(r routes.Route) []string {
	out := []string{r.Scope()}
	if r.Mailbox {
		out = append(out, authn.ScopeMailbox)
	}
	return out
}

// stepUp refuses, as HTTP 403 with an insufficient_scope challenge naming the scope (the MCP
// authorization spec's step-up), a tool call an OAuth grant lacks the scope for, so that its
// client can ask the owner for more. An API key's refusal stays the route's own tool error.
// A non-nil error means it answered.
func (h *Handler) stepUp(c *gin.Context, t boundTool, p *authn.Principal) error {
	if h.allowed(t.route, p) || t.route.Auth == routes.OwnerKey {
		return nil
	}
	need := strings.Join(neededScopes(t.route), " ")
	c.Header("WWW-Authenticate", fmt.Sprintf("Bearer error=%q, scope=%q, resource_metadata=%q, error_description=%q",
		"insufficient_scope", need, h.resourceURL(c.Request, MetadataPath), "the tool "+t.Name+" needs the scope "+need))
	err := httpx.Forbidden(httpx.CodeInsufficientScope, "the tool "+t.Name+" needs the scope "+need+": this grant lacks it")
	httpx.Abort(c, err)
	return err
}
