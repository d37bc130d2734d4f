package contract

import (
	"strings"
	"testing"
)

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
		if got := ProfileTitle(md); got != want {
			t.Errorf("ProfileTitle(%q) = %q, want %q", md, got, want)
		}
	}
}

func TestTruncateKeepsCharacters(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", MaxTitle) // two bytes each
	got := ProfileTitle("# " + long)
	if len(got) > MaxTitle || !strings.HasPrefix(long, got) || len(got)%2 != 0 {
		t.Errorf("title of %d bytes cut to %q (%d bytes), want whole characters within %d bytes", len(long), got, len(got), MaxTitle)
	}
}
