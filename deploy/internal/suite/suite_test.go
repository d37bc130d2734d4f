package suite

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestServices(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	work := "go 1.26\n\nuse (\n\t./deploy\n\t./pkg\n\t./gateway\n\t./webhook-svc\n)\n\nuse ./feed-svc\n"
	if err := os.WriteFile(filepath.Join(root, "go.work"), []byte(work), 0o644); err != nil {
		t.Fatal(err)
	}
	nested := filepath.Join(root, "mailbox-svc", "internal")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}

	got, err := Root(nested)
	if err != nil || got != root {
		t.Fatalf("Root(%s) = %q, %v; want %q", nested, got, err, root)
	}
	services, err := Services(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"context-svc", "feed-svc", "gateway", "identity-svc", "mailbox-svc", "webhook-svc"}
	if !slices.Equal(services, want) {
		t.Errorf("Services = %v, want %v (go.work modules except pkg and deploy, plus the four required)", services, want)
	}
}

func TestServicesRefusesNestedModules(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.work"), []byte("go 1.26\n\nuse ./tools/lint\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Services(root); err == nil {
		t.Error("Services accepted a module that is not a top-level folder")
	}
}

func TestURLEnv(t *testing.T) {
	t.Parallel()
	for service, want := range map[string]string{
		"identity-svc": "IDENTITY_URL",
		"context-svc":  "CONTEXT_URL",
		"webhook-svc":  "WEBHOOK_URL",
		"gateway":      "GATEWAY_URL",
	} {
		if got := URLEnv(service); got != want {
			t.Errorf("URLEnv(%q) = %q, want %q", service, got, want)
		}
	}
}

func TestCalls(t *testing.T) {
	t.Parallel()
	deployed := []string{"context-svc", "gateway", "identity-svc", "mailbox-svc"}
	for service, want := range map[string][]string{
		"gateway":      {"context-svc", "identity-svc", "mailbox-svc"},
		"mailbox-svc":  {"identity-svc"},
		"identity-svc": nil,
	} {
		if got := Calls(service, deployed); !slices.Equal(got, want) {
			t.Errorf("Calls(%q) = %v, want %v", service, got, want)
		}
	}
}
