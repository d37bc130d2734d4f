package http

import "testing"

func TestProfileTitle(t *testing.T) {
	t.Parallel()
	for md, want := range map[string]string{
		"# Ada Lovelace\nbody":      "Ada Lovelace",
		"\n\n## Second level\n":     "Second level",
		"plain first line\n# Later": "Later",
		"plain first line\nmore":    "plain first line",
		"":                          "",
		"#   Spaced   \n":           "Spaced",
	} {
		if got := profileTitle(md); got != want {
			t.Errorf("profileTitle(%q) = %q, want %q", md, got, want)
		}
	}
}
