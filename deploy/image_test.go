// Package deploy tests the container build: deploy/build.sh, which the Dockerfile's build stage
// runs, and the Dockerfile itself.
package deploy

import (
	"bytes"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// fakeRepo lays out a repository with one service, hello-svc, and this deploy/build.sh.
func fakeRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	script, err := os.ReadFile("build.sh")
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat("build.sh"); err != nil || info.Mode()&0o111 == 0 {
		t.Fatalf("deploy/build.sh is not executable (%v); the Dockerfile runs it directly", err)
	}
	files := map[string]string{
		"go.work":          "go 1.26.0\n\nuse ./hello-svc\n",
		"hello-svc/go.mod": "module example.com/hello-svc\n\ngo 1.26.0\n",
		"deploy/build.sh":  string(script),
		"hello-svc/cmd/hello-svc/main.go": `package main

import (
	"fmt"
	"net"
)

// net pulls in the cgo resolver unless cgo is off.
func main() { fmt.Println("hello", net.IPv4len) }
`,
	}
	for name, body := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// runBuild runs deploy/build.sh from a directory other than the repository root, for Linux as the
// Dockerfile does.
func runBuild(t *testing.T, root string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(root, "deploy", "build.sh"), args...)
	cmd.Dir = t.TempDir()
	// CGO_ENABLED=1 here: the script itself must turn cgo off.
	cmd.Env = append(os.Environ(), "GOWORK=", "GOFLAGS=-buildvcs=false", "CGO_ENABLED=1",
		"GOOS=linux", "GOARCH="+runtime.GOARCH)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestBuildScriptBuildsAStaticStrippedBinary(t *testing.T) {
	t.Parallel()
	root := fakeRepo(t)
	outDir := filepath.Join(t.TempDir(), "out")
	if out, err := runBuild(t, root, "hello-svc", outDir); err != nil {
		t.Fatalf("build.sh hello-svc: %v\n%s", err, out)
	}
	bin := filepath.Join(outDir, "hello-svc")

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("%s is not an ELF binary: %v", bin, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("binary is dynamically linked (%s): it would not run on a distroless static image", p.Type)
		}
	}
	if _, err := f.Symbols(); !errors.Is(err, elf.ErrNoSymbols) {
		t.Errorf("binary keeps its symbol table (err %v), want -s -w", err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(root)) {
		t.Errorf("binary contains the build directory %s, want -trimpath", root)
	}

	if runtime.GOOS == "linux" { // elsewhere the Linux binary cannot run; the checks above hold
		out, err := exec.Command(bin).Output()
		if err != nil || strings.TrimSpace(string(out)) != "hello 4" {
			t.Errorf("built binary printed %q, %v; want \"hello 4\"", out, err)
		}
	}
}

func TestBuildScriptRefusesWhatIsNotAService(t *testing.T) {
	t.Parallel()
	root := fakeRepo(t)
	for _, args := range [][]string{
		{"nope-svc", t.TempDir()},
		{"../hello-svc", t.TempDir()},
		{"hello-svc"},
	} {
		out, err := runBuild(t, root, args...)
		if err == nil {
			t.Errorf("build.sh %v succeeded, want a failure", args)
		}
		if !strings.Contains(out, "build.sh") {
			t.Errorf("build.sh %v: message %q does not say what failed", args, out)
		}
	}
}

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case: FROM, RUN, …
	args string
}

// stages parses a Dockerfile into its build stages (instructions before the first FROM, such as
// global ARGs, are left out).
func stages(t *testing.T, path string) [][]instruction {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]instruction
	var line string
	for raw := range strings.Lines(string(data)) {
		trimmed := strings.TrimSpace(raw)
		if line == "" && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if cont, ok := strings.CutSuffix(trimmed, `\`); ok {
			line += cont + " "
			continue
		}
		line += trimmed
		cmd, args, _ := strings.Cut(line, " ")
		line = ""
		in := instruction{strings.ToUpper(cmd), strings.TrimSpace(args)}
		if in.cmd == "FROM" {
			out = append(out, nil)
		}
		if len(out) > 0 {
			out[len(out)-1] = append(out[len(out)-1], in)
		}
	}
	return out
}

func TestDockerfile(t *testing.T) {
	t.Parallel()
	st := stages(t, "Dockerfile")
	if len(st) != 2 {
		t.Fatalf("Dockerfile has %d stages, want a build stage and a runtime stage", len(st))
	}
	build, runtime := st[0], st[1]

	var runsScript bool
	for _, in := range build {
		if in.cmd == "RUN" && strings.Contains(in.args, `deploy/build.sh "$SERVICE" /out`) {
			runsScript = true
		}
	}
	if !runsScript {
		t.Error(`the build stage does not run deploy/build.sh "$SERVICE" /out, the script CI runs`)
	}

	from := strings.Fields(runtime[0].args)
	if base := from[len(from)-1]; base != "scratch" && !(strings.HasPrefix(base, "gcr.io/distroless/static") && strings.HasSuffix(base, ":nonroot")) {
		t.Errorf("runtime image %s, want distroless static nonroot or scratch", base)
	}
	var user, entrypoint string
	var copiesBinary bool
	for _, in := range runtime {
		switch in.cmd {
		case "USER":
			user = in.args
		case "ENTRYPOINT":
			entrypoint = in.args
		case "COPY":
			copiesBinary = copiesBinary || strings.Contains(in.args, "--from=build /out/${SERVICE} ")
		case "RUN":
			t.Errorf("the runtime stage runs %q: it has no shell", in.args)
		}
	}
	if uid, _, _ := strings.Cut(user, ":"); uid == "" || uid == "0" || uid == "root" {
		t.Errorf("runtime USER %q, want a non-root user", user)
	}
	if !copiesBinary {
		t.Error("the runtime stage does not copy /out/${SERVICE} from the build stage")
	}
	if !strings.HasPrefix(entrypoint, "[") {
		t.Errorf("ENTRYPOINT %s is in shell form; distroless has no shell", entrypoint)
	}
	for _, stage := range st {
		if i := slices.IndexFunc(stage, func(in instruction) bool { return in.cmd == "HEALTHCHECK" }); i >= 0 {
			t.Error("the Dockerfile declares a HEALTHCHECK; Kubernetes probes check health")
		}
	}
}
