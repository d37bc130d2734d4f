package graph_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/svcdev/svc/graph-svc/internal/graph"
	"github.com/svcdev/svc/pkg/apierr"
)

func TestDirectDownload(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{"https://drive.google.com/file/d/1AbC_d-E/view?usp=sharing", "https://drive.google.com/uc?export=download&id=1AbC_d-E"},
		{"https://drive.google.com/open?id=1AbC", "https://drive.google.com/uc?export=download&id=1AbC"},
		{"https://docs.google.com/document/d/1Doc/edit?usp=sharing", "https://docs.google.com/document/d/1Doc/export?format=txt"},
		{"https://docs.google.com/spreadsheets/d/1Sheet/edit#gid=0", "https://docs.google.com/spreadsheets/d/1Sheet/export?format=csv"},
		{"https://docs.google.com/presentation/d/1Deck/edit", "https://docs.google.com/presentation/d/1Deck/export?format=txt"},
		{"https://www.dropbox.com/s/abc123/notes.txt?dl=0", "https://www.dropbox.com/s/abc123/notes.txt?dl=1"},
		{"https://www.dropbox.com/scl/fi/xyz/plan.md?rlkey=k&dl=0", "https://www.dropbox.com/scl/fi/xyz/plan.md?dl=1&rlkey=k"},
		{"https://1drv.ms/t/s!AkLm", "https://api.onedrive.com/v1.0/shares/u!aHR0cHM6Ly8xZHJ2Lm1zL3QvcyFBa0xt/root/content"},
	} {
		got, err := graph.DirectDownload(c.in)
		if err != nil || got != c.want {
			t.Errorf("DirectDownload(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"https://example.com/file.pdf", "http://drive.google.com/file/d/1/view", "https://drive.google.com/drive/folders",
		"https://docs.google.com/forms/d/1/viewform", "not a url"} {
		var he *apierr.Error
		if _, err := graph.DirectDownload(in); !errors.As(err, &he) || he.Code != apierr.CodeInvalidURL {
			t.Errorf("DirectDownload(%s) = %v, want INVALID_URL", in, err)
		}
	}
}

func TestReadableText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, page string
		want, not  []string
	}{
		{"article", `<html><head><title>T</title><script>var x="HIDDEN"</script></head><body><nav>Menu</nav><article><p>` +
			strings.Repeat("The first paragraph of the article says something worth keeping. ", 5) + `</p><p>Second paragraph.</p></article></body></html>`,
			[]string{"The first paragraph", "Second paragraph."}, []string{"HIDDEN", "<p>"}},
		{"no article", `<p>Just one line, <b>bold</b>.</p>`, []string{"Just one line, bold."}, []string{"<b>"}},
	} {
		got, err := graph.HTMLText([]byte(c.page), "https://example.com/")
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", c.name, got, w)
			}
		}
		for _, n := range c.not {
			if strings.Contains(got, n) {
				t.Errorf("%s: %q holds %q", c.name, got, n)
			}
		}
	}
}
