package oauth

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"html/template"
	"net/http"
	"net/http/httptest"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/httpx"
)

//go:embed consent.html
var consentHTML string

var consentPage = template.Must(template.New("consent").Parse(consentHTML))

// Steps of the consent page.
const (
	stepIdentify = "identify" // ask for a key
	stepAllow    = "allow"    // show the box and ask to allow
	stepError    = "error"
)

// consentView is what the consent page shows.
type consentView struct {
	Step    string
	Request string
	CSRF    string
	Client  *Client
	Scopes  []string
	Box     *box
	Problem string
}

// ScopeText says in words what a scope lets the app do.
func (consentView) ScopeText(scope string) string {
	switch scope {
	case authn.ScopeRead:
		return "read your box: its profile, threads, memory and feeds"
	case authn.ScopeWrite:
		return "act for your box: send messages, write context, decisions and feed items"
	case authn.ScopeMailbox:
		return "read and manage your mailbox"
	}
	return scope
}

// box is what the consent page shows of the object being granted.
type box struct {
	Hash   string
	Title  string
	Claims []claim
}

// claim is a verified claim of the box.
type claim struct {
	ProofType string `json:"proof_type"`
	Target    string `json:"claimed_target"`
	Status    string `json:"status"`
}

// box reads what the page shows of the key's object: its title from identity-svc, and its
// verified claims through the claims route, called with the pasted key as any client would.
func (s *Server) box(c *gin.Context, p *authn.Principal, key string) (*box, error) {
	ctx := c.Request.Context()
	obj, err := s.opts.Identity.Object(ctx, p.ObjectID)
	if err != nil {
		return nil, httpx.Unavailable(err)
	}
	b := &box{Hash: obj.Hash, Title: obj.Title}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "/api/objects/"+url.PathEscape(obj.Hash)+"/claims?limit=20", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set(httpx.HeaderRequestID, httpx.RequestID(c))
	req.RemoteAddr = c.Request.RemoteAddr
	rec := httptest.NewRecorder()
	s.opts.Engine.ServeHTTP(rec, req)
	if rec.Code == http.StatusOK {
		var list struct {
			Claims []claim `json:"claims"`
		}
		if json.Unmarshal(rec.Body.Bytes(), &list) == nil {
			for _, cl := range list.Claims {
				if cl.Status == "verified" {
					b.Claims = append(b.Claims, cl)
				}
			}
		}
	}
	return b, nil
}

// render writes the consent page. It must not be framed (a click on Allow is the consent), is
// never cached, and sends no referrer to the sites it links.
func (s *Server) render(c *gin.Context, status int, v consentView) {
	var buf bytes.Buffer
	if err := consentPage.Execute(&buf, v); err != nil {
		httpx.Abort(c, err)
		return
	}
	h := c.Writer.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	c.Data(status, "text/html; charset=utf-8", buf.Bytes())
}

// errorPage answers a request that cannot go back to the client.
func (s *Server) errorPage(c *gin.Context, status int, problem string) {
	s.render(c, status, consentView{Step: stepError, Problem: problem})
}
