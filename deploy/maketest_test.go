package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMakeTestRunsEveryModule: `make test` goes on after a module fails, then exits non-zero
// naming it, so one failure never hides another module's result.
func TestMakeTestRunsEveryModule(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatal("make is needed: `make test` is how the suite runs")
	}
	dir := t.TempDir()
	module := func(name, body string) string {
		path := filepath.Join(dir, name)
		files := map[string]string{
			"go.mod":    "module example.com/" + name + "\n\ngo 1.26.0\n",
			"a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) { " + body + " }\n",
		}
		for file, text := range files {
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(path, file), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return path
	}
	failing := module("first", `t.Fatal("broken")`)
	passing := module("second", "")
	cmd := exec.Command("make", "-s", "-C", "..", "test", "MODULES="+failing+" "+passing, "GO_TEST_FLAGS=-count=1",
		"FERRETDB_TEST_PKGS=")
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("make test passed with a failing module:\n%s", out)
	}
	text := string(out)
	if !strings.Contains(text, "ok  \texample.com/second") {
		t.Errorf("the module after the failing one did not run:\n%s", text)
	}
	if !strings.Contains(text, "FAILED modules: "+failing) {
		t.Errorf("the failing module is not named at the end:\n%s", text)
	}
}
