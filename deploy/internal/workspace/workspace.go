// Package workspace finds the services that deploy/ must ship by reading the repository's go.work.
package workspace

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
)

// required are the services every deployment holds, whether or not go.work lists them yet.
func required() []string {
	return []string{"gateway", "identity-svc", "context-svc", "mailbox-svc"}
}

// notServices are the workspace modules that are not services.
func notServices() []string {
	return []string{"pkg", "deploy"}
}

// Root returns the repository root: dir or the nearest directory above it that holds go.work.
func Root(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("workspace root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("workspace root: no go.work above the working directory")
		}
		dir = parent
	}
}

// Services returns, sorted, every module that the go.work at root uses except pkg and deploy,
// together with the services every deployment holds.
func Services(root string) ([]string, error) {
	path := filepath.Join(root, "go.work")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("workspace services: %w", err)
	}
	work, err := modfile.ParseWork(path, data, nil)
	if err != nil {
		return nil, fmt.Errorf("workspace services: %w", err)
	}
	services := required()
	for _, use := range work.Use {
		dir := filepath.ToSlash(filepath.Clean(use.Path))
		if strings.Contains(dir, "/") {
			return nil, fmt.Errorf("workspace services: %s: every module is a top-level folder", use.Path)
		}
		if !slices.Contains(notServices(), dir) {
			services = append(services, dir)
		}
	}
	slices.Sort(services)
	return slices.Compact(services), nil
}

// URLEnv names the environment variable that holds a service's internal URL:
// context-svc → CONTEXT_URL.
func URLEnv(service string) string {
	name := strings.TrimSuffix(service, "-svc")
	return strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_URL"
}
