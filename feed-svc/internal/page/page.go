// Package page renders the public box page: an object's composed profile (markdown rendered by
// goldmark, then sanitised by bluemonday, so that nothing in a profile can run), its latest feed
// items and how to reach it. The page is self-contained: plain CSS, no scripts, no external
// assets.
package page

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/url"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/svcdev/svc/feed-svc/internal/feed"
)

//go:embed templates/*.html
var files embed.FS

// Renderer renders box pages and the not-found page.
type Renderer struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
	tmpl   *template.Template
	base   string
}

// New returns a renderer; baseURL is the public address of the API, for links.
func New(baseURL string) (*Renderer, error) {
	tmpl, err := template.ParseFS(files, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("page templates: %w", err)
	}
	// goldmark's default leaves raw HTML out; the sanitiser is the second line of defence.
	return &Renderer{
		md:     goldmark.New(goldmark.WithExtensions(extension.GFM)),
		policy: bluemonday.UGCPolicy(),
		tmpl:   tmpl,
		base:   baseURL,
	}, nil
}

// Box is what a box page shows.
type Box struct {
	Hash    string
	Title   string
	Profile string // markdown
	Items   []feed.Item
	IsFeed  bool
}

type boxData struct {
	Box
	ProfileHTML template.HTML
	Base        string
	LLMTxt      string
	AgentCard   string
	FeedURL     string
}

// Render writes the box page.
func (r *Renderer) Render(b Box) ([]byte, error) {
	var md bytes.Buffer
	if err := r.md.Convert([]byte(b.Profile), &md); err != nil {
		return nil, fmt.Errorf("render profile: %w", err)
	}
	path := "/api/objects/" + url.PathEscape(b.Hash)
	d := boxData{
		Box: b,
		// The sanitised markup is the only HTML the page takes from data; everything else is
		// escaped by html/template.
		ProfileHTML: template.HTML(r.policy.SanitizeBytes(md.Bytes())), //nolint:gosec // sanitised above
		Base:        r.base,
		LLMTxt:      r.base + path + "/llm.txt",
		AgentCard:   r.base + path + "/agent-card.json",
		FeedURL:     r.base + "/api/feeds/" + url.PathEscape(b.Hash) + "/items",
	}
	if d.Title == "" {
		d.Title = b.Hash
	}
	return r.execute("box.html", d)
}

// NotFound writes the page of an unknown or private box.
func (r *Renderer) NotFound() ([]byte, error) {
	return r.execute("notfound.html", struct{ Base string }{r.base})
}

func (r *Renderer) execute(name string, data any) ([]byte, error) {
	var out bytes.Buffer
	if err := r.tmpl.ExecuteTemplate(&out, name, data); err != nil {
		return nil, fmt.Errorf("render %s: %w", name, err)
	}
	return out.Bytes(), nil
}
