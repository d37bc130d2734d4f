package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// adapters are the packages under a service's internal/ that speak HTTP or Mongo on the use
// cases' behalf (STYLE.md, "The shape of a service"); every other package there holds use cases,
// consumers or rules and must build without Gin or pkg/httpx.
var adapters = map[string]string{
	"api":   "Gin routes and handlers",
	"store": "the Mongo repository",
}

// serviceAdapters are the further adapters of one service, with the reason.
var serviceAdapters = map[string]string{
	"feed-svc/internal/stream": "serves event streams as Server-Sent Events and long polls, an HTTP adapter like api",
}

// forbidden are the packages a use case may not depend on, even indirectly: it returns
// pkg/apierr errors, which one adapter in pkg/httpx renders.
var forbidden = []string{"github.com/gin-gonic/gin", "github.com/svcdev/svc/pkg/httpx"}

// TestUseCasesBuildWithoutGinOrHTTPX runs `go list -deps` over the use-case packages of every
// service and fails on any that reaches Gin or pkg/httpx.
func TestUseCasesBuildWithoutGinOrHTTPX(t *testing.T) {
	t.Parallel()
	services, err := filepath.Glob("../*-svc")
	if err != nil || len(services) < 7 {
		t.Fatalf("found services %v (%v), want the seven", services, err)
	}
	checked := 0
	for _, dir := range services {
		svc := filepath.Base(dir)
		entries, err := os.ReadDir(filepath.Join(dir, "internal"))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			rel := svc + "/internal/" + e.Name()
			if !e.IsDir() || adapters[e.Name()] != "" || serviceAdapters[rel] != "" {
				continue
			}
			cmd := exec.Command("go", "list", "-deps", "./internal/"+e.Name())
			cmd.Dir = dir
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list -deps %s: %v", rel, err)
			}
			deps := strings.Fields(string(out))
			for _, f := range forbidden {
				if slices.Contains(deps, f) {
					t.Errorf("%s depends on %s: a use case returns pkg/apierr errors and takes contract types, never Gin's", rel, f)
				}
			}
			checked++
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d use-case packages, want every service's", checked)
	}
}
