package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsReferToWhatTheRepositoryHolds: the README and docs/*.md link only to files the
// repository holds, and cite no document it lacks (a specification or design document kept
// elsewhere), so that a reader can follow every reference from a clone.
func TestDocsReferToWhatTheRepositoryHolds(t *testing.T) {
	docs, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, "../README.md")
	link := regexp.MustCompile(`\]\(([^)#]+)(#[^)]*)?\)`)
	// Ways the documents once cited what only lived outside the repository.
	elsewhere := regexp.MustCompile(`(?i)interface-spec|DESIGN §|design document|the spec('s)?\b|spec §`)
	for _, doc := range docs {
		raw, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := string(raw)
		for _, m := range link.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(doc), target)); err != nil {
				t.Errorf("%s links to %s, which the repository does not hold", doc, target)
			}
		}
		for i, line := range strings.Split(text, "\n") {
			if m := elsewhere.FindString(line); m != "" {
				t.Errorf("%s:%d cites %q, a document the repository does not hold: %s", doc, i+1, m, strings.TrimSpace(line))
			}
		}
	}
}
