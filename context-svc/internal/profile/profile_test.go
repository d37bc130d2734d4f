package profile

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svcdev/svc/pkg/contract"
)

func TestCompose(t *testing.T) {
	t.Parallel()
	got := Compose("svc_ada", "https://svc.example", "  # Ada\n\nHello.\n\n", []Source{
		{Kind: KindURL, Title: "Home\npage", URL: "https://ada.example", Text: "Fetched text."},
		{Kind: KindText, Title: "Notes", Text: "Some notes."},
		{Kind: KindSocial, Title: "Gone", URL: "https://social.example/ada", Unavailable: true},
	})
	for _, want := range []string{
		"# Ada\n\nHello.\n\n" + ComposedMarker + "\n\n## Home page\n\nSource (url): https://ada.example\n\nFetched text.\n",
		"\n## Notes\n\nSome notes.\n",
		"## Gone\n\nSource (social): https://social.example/ada\n\n(This source could not be fetched.)\n",
		"\n---\n\n## How to message this object\n",
		"POST https://svc.example/api/messages",
		`"to_hash": "svc_ada"`,
		"GET https://svc.example/api/objects/svc_ada/rules",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("composed profile lacks %q:\n%s", want, got)
		}
	}
	if empty := Compose("svc_new", "https://svc.example", " \n", nil); !strings.HasPrefix(empty, "# svc_new\n\nThis object has not written its profile yet.\n\n"+ComposedMarker+"\n\n---") {
		t.Errorf("profile without markdown:\n%s", empty)
	}
}

// TestStoredPart: a composed llm.txt written back keeps only the owner's markdown.
func TestStoredPart(t *testing.T) {
	t.Parallel()
	md := "# Ada\n\nHello."
	composed := Compose("svc_ada", "https://svc.example", md, []Source{{Kind: KindText, Title: "Notes", Text: "n"}})
	if got := StoredPart(composed); got != md {
		t.Fatalf("StoredPart of the composed profile = %q, want %q", got, md)
	}
	if again := Compose("svc_ada", "https://svc.example", StoredPart(composed), []Source{{Kind: KindText, Title: "Notes", Text: "n"}}); again != composed {
		t.Fatalf("a round trip changed the profile:\n%s\n---\n%s", composed, again)
	}
	if got := StoredPart("# Plain\n"); got != "# Plain\n" {
		t.Fatalf("markdown without the marker changed: %q", got)
	}
}

func TestSourceText(t *testing.T) {
	t.Parallel()
	page := `<!doctype html><html><head><title>T</title><style>p{color:red}</style><script>alert("x")</script></head>
<body><h1>Ada  Lovelace</h1><p>Wrote the <b>first</b> program &amp; notes.</p><noscript>enable js</noscript>
<ul><li>One</li><li>Two</li></ul><br/>End</body></html>`
	cases := []struct {
		name, contentType, body, want string
		err                           bool
	}{
		{"html", "text/html; charset=utf-8", page, "Ada Lovelace\nWrote the first program & notes.\nOne\nTwo\nEnd", false},
		{"markdown", "text/markdown", "# Title\n\n- item\n", "# Title\n\n- item", false},
		{"no content type", "", "plain words", "plain words", false},
		{"json", "application/json", `{"a":1}`, `{"a":1}`, false},
		{"image", "image/png", "\x89PNG", "", true},
		{"pdf", "application/pdf", "%PDF-1.4", "", true},
		{"invalid utf-8", "text/plain", "\xff\xfe\xfd", "", true},
	}
	for _, c := range cases {
		got, err := SourceText(c.contentType, []byte(c.body))
		if (err != nil) != c.err || got != c.want {
			t.Errorf("%s: SourceText = %q, %v; want %q (error %v)", c.name, got, err, c.want, c.err)
		}
	}
	long, err := SourceText("text/plain", []byte(strings.Repeat("é", MaxSourceText)))
	if err != nil || len(long) > MaxSourceText || !strings.HasPrefix(strings.Repeat("é", MaxSourceText), long) {
		t.Errorf("long text cut to %d bytes (error %v), want at most %d whole characters", len(long), err, MaxSourceText)
	}
}

func TestCoachAsksForWhatIsMissing(t *testing.T) {
	t.Parallel()
	bare := Coach(CoachInput{Hash: "svc_ada", BaseURL: "https://svc.example", Markdown: "just a line"})
	for _, topic := range []string{"Name", "Summary", "What it does", "Current focus", "Working together", "Sources", "Response policy"} {
		if !strings.Contains(bare, ". "+topic+"\n") {
			t.Errorf("coach of a bare profile does not ask about %q:\n%s", topic, bare)
		}
	}
	full := Coach(CoachInput{
		Hash: "svc_ada", BaseURL: "https://svc.example", Sources: 1,
		Markdown: "# Ada\n\nAda writes programs for the Analytical Engine and explains them to anyone who asks nicely.\n\n" +
			"## What I do\n\n- programs\n\n## Now\n\nNotes on Bernoulli numbers.\n\n## How to work with me\n\nSend a question.",
		Rules: &contract.Rules{Respond: &contract.RulesRespond{Policy: "Within a week."}},
	})
	if !strings.Contains(full, "covers the basics") || strings.Contains(full, "Why:") {
		t.Errorf("coach of a complete profile:\n%s", full)
	}
	if !strings.Contains(full, "Profile now: ") || !strings.Contains(full, "4 headings, 1 included sources") {
		t.Errorf("coach does not describe the profile:\n%s", full)
	}
}

func TestCard(t *testing.T) {
	t.Parallel()
	card := Card("svc_ada", "https://svc.example", "# Ada Lovelace\n\nFirst programmer.\nLikes engines.\n\n## More\n\nOther text.", 7,
		&contract.Rules{Respond: &contract.RulesRespond{Policy: "Replies\nweekly."}})
	if card.Name != "Ada Lovelace" || card.Description != "First programmer. Likes engines." || card.Version != "7" ||
		len(card.SupportedInterfaces) != 1 || card.SupportedInterfaces[0].URL != "https://svc.example/api/objects/svc_ada/a2a" ||
		card.SupportedInterfaces[0].ProtocolVersion != "1.0" || card.SupportedInterfaces[0].ProtocolBinding != "HTTP+JSON" ||
		card.SecuritySchemes["svc_api_key"].HTTPAuth == nil || card.DocumentationURL != "https://svc.example/api/objects/svc_ada/llm.txt" {
		t.Errorf("card = %+v", card)
	}
	if len(card.Skills) != 2 || !strings.Contains(card.Skills[0].Description, "svc_ada/a2a/message:send") ||
		!strings.HasSuffix(card.Skills[0].Description, "Response policy: Replies weekly.") {
		t.Errorf("skills = %+v", card.Skills)
	}
	if mcp := card.Skills[len(card.Skills)-1]; mcp.ID != "mcp" || !strings.Contains(mcp.Description, "https://svc.example/mcp") {
		t.Errorf("the card does not name /mcp: %+v", card.Skills)
	}
	if empty := Card("svc_new", "https://svc.example", "", 1, nil); empty.Name != "svc_new" || empty.Description == "" {
		t.Errorf("card of an empty profile = %+v", empty)
	}
}

func TestDecisionMemory(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	high, low, edge := 0.9, 0.1, MajorConfidence
	ds := []Decision{
		{ThreadID: "thr_2", Title: "Write it in Go", CreatedAt: at.Add(-time.Hour)},
		{ThreadID: "thr_1", Title: "Ship v1", Body: "In March.", Confidence: &high, CreatedAt: at.Add(-2 * time.Hour)},
	}
	for _, c := range []struct {
		d    Decision
		want bool
	}{{Decision{}, true}, {Decision{Confidence: &high}, true}, {Decision{Confidence: &edge}, true}, {Decision{Confidence: &low}, false}} {
		if Major(c.d) != c.want {
			t.Errorf("Major(confidence %v) = %v", c.d.Confidence, !c.want)
		}
	}
	got := DecisionMemory(ds, nil, at)
	for _, want := range []string{
		"# Decision memory\n\nRebuilt 2026-03-01T12:00:00.000Z from 2 current major thread decisions, newest first.\n",
		"## Write it in Go\n\nThread thr_2, decided 2026-03-01T11:00:00.000Z, confidence not given.\n",
		"## Ship v1\n\nIn March.\n\nThread thr_1, decided 2026-03-01T10:00:00.000Z, confidence 0.9.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("memory lacks %q:\n%s", want, got)
		}
	}
	if none := DecisionMemory(nil, nil, at); !strings.Contains(none, "no major thread decisions are recorded yet") {
		t.Errorf("memory without decisions:\n%s", none)
	}
}

func TestInclude(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		current       []string
		known         []string
		wanted        map[string]bool
		next, toggled []string
	}{
		{"nothing named", []string{"a", "b"}, nil, map[string]bool{}, []string{"a", "b"}, nil},
		{"leave one out", []string{"a", "b", "c"}, []string{"b"}, map[string]bool{"b": false}, []string{"a", "c"}, []string{"b"}},
		{"add in order", []string{"a"}, []string{"d", "c"}, map[string]bool{"c": true, "d": true}, []string{"a", "d", "c"}, []string{"d", "c"}},
		{"already as wanted", []string{"a"}, []string{"a", "b"}, map[string]bool{"a": true, "b": false}, []string{"a"}, nil},
		{"swap", []string{"a"}, []string{"b", "a"}, map[string]bool{"a": false, "b": true}, []string{"b"}, []string{"b", "a"}},
	}
	for _, c := range cases {
		next, toggled := Include(c.current, c.known, c.wanted)
		if !slices.Equal(next, c.next) || !slices.Equal(toggled, c.toggled) {
			t.Errorf("%s: Include = %v, %v; want %v, %v", c.name, next, toggled, c.next, c.toggled)
		}
	}
}
