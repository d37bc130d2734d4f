package page

import (
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

func TestRelative(t *testing.T) {
	now := time.Date(2026, 11, 24, 18, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		ago  time.Duration
		want string
	}{
		{10 * time.Second, "just now"},
		{time.Minute, "1 minute ago"},
		{59 * time.Minute, "59 minutes ago"},
		{3 * time.Hour, "3 hours ago"},
		{49 * time.Hour, "2 days ago"},
		{40 * 24 * time.Hour, "on 15 October"},
		{400 * 24 * time.Hour, "on 20 October 2025"},
	} {
		if got := relative(now.Add(-tc.ago), now); got != tc.want {
			t.Errorf("%v ago: %q, want %q", tc.ago, got, tc.want)
		}
	}
}

// The box page renders the profile without the title it shows above it and without llm.txt's
// messaging section, so that it gives one way to message.
func TestBoxProfile(t *testing.T) {
	md := "# Ada\n\nAnalyst.\n\n<!-- svc: composed -->\n" + messagingHeading + "\n\nPOST /api/messages\n"
	got := boxProfile(md, "Ada")
	if strings.Contains(got, "# Ada") || strings.Contains(got, "/api/messages") || !strings.Contains(got, "Analyst.") {
		t.Errorf("boxProfile = %q", got)
	}
	if got := boxProfile("# Other\n\nText", "Ada"); !strings.Contains(got, "# Other") {
		t.Errorf("a heading that is not the title was dropped: %q", got)
	}
	if s := summary(got, "svc_x"); s != "Analyst." {
		t.Errorf("summary = %q", s)
	}
}

func TestRenderHome(t *testing.T) {
	r, err := New("https://svc.example")
	if err != nil {
		t.Fatal(err)
	}
	r.now = func() time.Time { return time.Date(2026, 11, 24, 18, 0, 0, 0, time.UTC) }
	out, err := r.RenderHome(Home{BoxesTotal: 1, Boxes: []Entry{{Hash: "svc_ada", Title: "Ada <b>", At: "2026-11-24T15:00:00.000Z"}}})
	if err != nil {
		t.Fatal(err)
	}
	html := string(out)
	for _, want := range []string{`<a class="name" href="https://svc.example/svc_ada">Ada &lt;b&gt;</a>`,
		`<time datetime="2026-11-24T15:00:00.000Z" title="24 November 2026, 15:00 UTC">3 hours ago</time>`,
		`<meta property="og:url" content="https://svc.example/">`, "Nothing published yet."} {
		if !strings.Contains(html, want) {
			t.Errorf("the home page lacks %q", want)
		}
	}
}

// Every page carries the pages' script byte for byte, the one ScriptSource's hash admits, and no
// other script.
func TestPagesCarryTheAdmittedScript(t *testing.T) {
	r, err := New("https://svc.example")
	if err != nil {
		t.Fatal(err)
	}
	box, err := r.Render(Box{Hash: "svc_x", Title: "X", Profile: "# X\n\n<script>alert(1)</script>\n"})
	if err != nil {
		t.Fatal(err)
	}
	home, err := r.RenderHome(Home{})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(script))
	if want := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; r.ScriptSource() != want {
		t.Fatalf("ScriptSource() = %s, want %s", r.ScriptSource(), want)
	}
	for name, page := range map[string][]byte{"box": box, "home": home} {
		html := string(page)
		if strings.Count(html, "<script") != 1 || !strings.Contains(html, "<script>"+script+"</script>") {
			t.Errorf("the %s page does not carry exactly the admitted script", name)
		}
	}
}
