// Package page renders the public pages: the home page (what svc is, the newest public boxes and
// the network's feed) and each box page (an object's profile, markdown rendered by goldmark then
// sanitised by bluemonday so that nothing in a profile can run, its badges, its latest feed
// items and how to message it). The pages are self-contained: plain CSS, one script of their own
// (admitted by its hash; it makes the forms call the public API), no remote resources.
package page

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"net/url"
	"strings"
	"time"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"

	"github.com/svcdev/svc/feed-svc/internal/feed"
	"github.com/svcdev/svc/feed-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
)

//go:embed templates/*.html
var files embed.FS

// script is the pages' one script, written into every page as it is, so that its hash admits it.
//
//go:embed script/app.js
var script string

// Renderer renders the pages.
type Renderer struct {
	md     goldmark.Markdown
	policy *bluemonday.Policy
	tmpl   *template.Template
	base   string
	now    func() time.Time
}

// ScriptSource is the Content-Security-Policy source that admits the pages' script and no other:
// its SHA-256 hash.
func (r *Renderer) ScriptSource() string {
	sum := sha256.Sum256([]byte(script))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// New returns a renderer; baseURL is the public address of the API, for links.
func New(baseURL string) (*Renderer, error) {
	// The script goes in as a value of type template.JS, which html/template writes byte for
	// byte (template text in a script would lose its comments), so that its hash admits it.
	funcs := template.FuncMap{"proof": proofName, "script": func() template.JS { return template.JS(script) }} //nolint:gosec // our own file
	tmpl, err := template.New("").Funcs(funcs).ParseFS(files, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("page templates: %w", err)
	}
	// goldmark's default leaves raw HTML out; the sanitiser is the second line of defence.
	return &Renderer{
		md:     goldmark.New(goldmark.WithExtensions(extension.GFM)),
		policy: bluemonday.UGCPolicy(),
		tmpl:   tmpl,
		base:   strings.TrimSuffix(baseURL, "/"),
		now:    clock.Now,
	}, nil
}

// Box is what a box page shows.
type Box struct {
	Hash    string
	Title   string
	Profile string // the composed profile's markdown
	Items   []feed.Item
	IsFeed  bool
	// Claimed is the object's mailbox status claimed (a verified claim); Claims the claims
	// themselves, a badge each; CustomHash that the hash was chosen (claim-custom-hash). Since is when the object
	// was created (zero when not known yet).
	Claimed    bool
	Claims     []store.Claim
	CustomHash bool
	Since      time.Time
}

type boxData struct {
	Box
	Page
	ProfileHTML template.HTML
	LLMTxt      string
	AgentCard   string
	JWKS        string
	DID         string
	FeedURL     string
	SinceView   *timeView
	ItemViews   []itemView
}

// Page is what every page's head and header need.
type Page struct {
	PageTitle   string
	Base        string
	URL         string // the page's own address
	Description string
}

type itemView struct {
	feed.Item
	At *timeView
	// Foreign is an item by another object than the box: the page names its author.
	Foreign bool
}

// Render writes the box page.
func (r *Renderer) Render(b Box) ([]byte, error) {
	profile := boxProfile(b.Profile, b.Title)
	var md bytes.Buffer
	if err := r.md.Convert([]byte(profile), &md); err != nil {
		return nil, fmt.Errorf("render profile: %w", err)
	}
	if b.Title == "" {
		b.Title = b.Hash
	}
	path := "/api/objects/" + url.PathEscape(b.Hash)
	d := boxData{
		Box:  b,
		Page: Page{PageTitle: b.Title + " · svc", Base: r.base, URL: r.base + "/" + url.PathEscape(b.Hash), Description: summary(profile, b.Hash)},
		// The sanitised markup is the only HTML the page takes from data; everything else is
		// escaped by html/template.
		ProfileHTML: template.HTML(r.policy.SanitizeBytes(md.Bytes())), //nolint:gosec // sanitised above
		LLMTxt:      r.base + path + "/llm.txt",
		AgentCard:   r.base + path + "/agent-card.json",
		JWKS:        r.base + path + "/jwks.json",
		DID:         r.base + path + "/did.json",
		FeedURL:     r.base + "/api/feeds/" + url.PathEscape(b.Hash) + "/items",
	}
	now := r.now()
	if !b.Since.IsZero() {
		d.SinceView = view(b.Since, now)
	}
	for _, it := range b.Items {
		foreign := it.Who != nil && (it.Who.Svc == nil || *it.Who.Svc != b.Hash)
		d.ItemViews = append(d.ItemViews, itemView{Item: it, At: viewOf(it.PostedAt, now), Foreign: foreign})
	}
	return r.execute("box.html", d)
}

// Entry is one row of the home page's lists: a box (Author empty) or a published item.
type Entry struct {
	Hash string
	// BoxTitle is the box's title, which an item's row names its box by ("": its hash).
	BoxTitle string
	Title    string
	Body     string
	Author   string
	Tags     []string
	At       string // ISO 8601
}

// Home is what the home page shows: a page of the newest public boxes and a page of the
// network's feed.
type Home struct {
	Boxes      []Entry
	BoxesTotal int64
	Items      []Entry
}

type entryView struct {
	Entry
	When *timeView
}

type homeData struct {
	Page
	BoxesTotal int64
	Boxes      []entryView
	Items      []entryView
}

// RenderHome writes the home page.
func (r *Renderer) RenderHome(h Home) ([]byte, error) {
	now := r.now()
	d := homeData{Page: Page{PageTitle: "svc: public identities for people, projects and agents", Base: r.base, URL: r.base + "/",
		Description: "svc gives people, projects and AI agents a durable public identity: a profile, a mailbox anyone may write to, and the memory of every conversation."},
		BoxesTotal: h.BoxesTotal}
	for _, e := range h.Boxes {
		d.Boxes = append(d.Boxes, entryView{Entry: e, When: viewOf(e.At, now)})
	}
	for _, e := range h.Items {
		d.Items = append(d.Items, entryView{Entry: e, When: viewOf(e.At, now)})
	}
	return r.execute("home.html", d)
}

// NotFound writes the page of an unknown or private box.
func (r *Renderer) NotFound() ([]byte, error) {
	return r.execute("notfound.html", Page{PageTitle: "No such box · svc", Base: r.base, URL: r.base + "/", Description: "No such box."})
}

func (r *Renderer) execute(name string, data any) ([]byte, error) {
	var out bytes.Buffer
	if err := r.tmpl.ExecuteTemplate(&out, name, data); err != nil {
		return nil, fmt.Errorf("render %s: %w", name, err)
	}
	return out.Bytes(), nil
}

// messagingHeading opens the section context-svc appends to every composed profile on how to
// message the object (for agents reading llm.txt). The box page has its own, for people, so it
// leaves that one out rather than show two ways.
const messagingHeading = "\n---\n\n## How to message this object"

// boxProfile is the part of the composed profile the page renders: without the messaging section,
// and without the leading title heading, which the page shows above the badges.
func boxProfile(md, title string) string {
	if i := strings.LastIndex(md, messagingHeading); i >= 0 {
		md = md[:i]
	}
	trimmed := strings.TrimLeft(md, " \t\r\n")
	first, rest, _ := strings.Cut(trimmed, "\n")
	if title != "" && strings.HasPrefix(first, "# ") && strings.TrimSpace(first[2:]) == title {
		return rest
	}
	return md
}

// summary is the profile's first paragraph as plain text, for link previews.
func summary(md, hash string) string {
	for _, line := range strings.Split(md, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "<!--") || strings.HasPrefix(line, "```") ||
			strings.HasPrefix(line, "|") || strings.HasPrefix(line, "---") {
			continue
		}
		line = strings.Trim(strings.NewReplacer("**", "", "__", "", "`", "", "> ", "").Replace(line), "-* ")
		if r := []rune(line); len(r) > 200 {
			line = string(r[:199]) + "…"
		}
		if line != "" {
			return line
		}
	}
	return "The svc box of " + hash + ": its profile, its feed and how to message it."
}

// proofNames are how a badge names the proof types it knows; another is named capitalised.
var proofNames = map[string]string{"domain": "Domain", "meta_tag": "Website", "github": "GitHub", "x": "X",
	"linkedin": "LinkedIn", "reddit": "Reddit", "mastodon": "Mastodon"}

// proofName is how a badge names a claim's proof type.
func proofName(proofType string) string {
	if name, ok := proofNames[proofType]; ok {
		return name
	}
	return strings.ToUpper(proofType[:min(1, len(proofType))]) + proofType[min(1, len(proofType)):]
}
