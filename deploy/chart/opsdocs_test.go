package chart

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/svcdev/svc/pkg/events"
)

// The commands of docs/operations.md, run as written: every helm command of its sh blocks runs
// with the Helm CLI of the version deploy/go.mod pins, in a directory where deploy/helm/svc is
// the chart and svc-values.yaml is the values file the page shows. Commands that need a cluster
// (install, upgrade, history, rollback) run against an address where none answers: they must
// get as far as contacting it, so every flag and --set parses; an install or upgrade is also
// rendered with its own flags by helm template at the chart's oldest Kubernetes, and decoded
// strictly (every command installs into the namespace svc). The Kafka topics the page lists are the ones the services use.

const operationsDoc = "../../docs/operations.md"

// helmCLI builds helm (HELM_BIN names one already built) from the version deploy/go.mod pins,
// with the modules the chart's other tests already use: no download of its own.
func helmCLI(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("HELM_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "helm")
	build := exec.Command("go", "build", "-o", bin, "helm.sh/helm/v3/cmd/helm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build helm: %v\n%s", err, out)
	}
	return bin
}

// docBlocks returns the fenced blocks of a language in a markdown document.
func docBlocks(doc, lang string) []string {
	re := regexp.MustCompile("(?s)```" + lang + "\n(.*?)```")
	var out []string
	for _, m := range re.FindAllStringSubmatch(doc, -1) {
		out = append(out, m[1])
	}
	return out
}

// commands splits a shell block into commands, joining continued lines.
func commands(block string) []string {
	var out []string
	cur := ""
	for _, line := range strings.Split(block, "\n") {
		if strings.HasSuffix(line, "\\") {
			cur += strings.TrimSuffix(line, "\\") + " "
			continue
		}
		if cmd := strings.TrimSpace(cur + line); cmd != "" {
			out = append(out, cmd)
		}
		cur = ""
	}
	return out
}

// workspace is a directory that looks like the repository's root to the documented commands.
func workspace(t *testing.T, doc string) string {
	t.Helper()
	dir := t.TempDir()
	helmDir, err := filepath.Abs("../helm")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(helmDir, filepath.Join(dir, "deploy", "helm")); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, b := range docBlocks(doc, "yaml") {
		if name, ok := strings.CutPrefix(strings.SplitN(b, "\n", 2)[0], "# "); ok && strings.HasSuffix(name, ".yaml") {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(b), 0o600); err != nil {
				t.Fatal(err)
			}
			found = found || name == "svc-values.yaml"
		}
	}
	if !found {
		t.Fatal("docs/operations.md shows no svc-values.yaml, which its commands use")
	}
	kubeconfig := "apiVersion: v1\nkind: Config\nclusters: [{name: none, cluster: {server: \"https://127.0.0.1:9\"}}]\n" +
		"users: [{name: none, user: {token: none}}]\ncontexts: [{name: none, context: {cluster: none, user: none}}]\ncurrent-context: none\n"
	if err := os.WriteFile(filepath.Join(dir, "kubeconfig"), []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestOperationsDocCommands(t *testing.T) {
	raw, err := os.ReadFile(operationsDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	helm := helmCLI(t)
	dir := workspace(t, doc)
	env := append(os.Environ(), "PATH="+filepath.Dir(helm)+":"+os.Getenv("PATH"), "KUBECONFIG="+filepath.Join(dir, "kubeconfig"),
		"HELM_CACHE_HOME="+filepath.Join(dir, ".cache"), "HELM_CONFIG_HOME="+filepath.Join(dir, ".config"), "HELM_DATA_HOME="+filepath.Join(dir, ".data"))
	run := func(cmd string) (string, error) {
		c := exec.Command("sh", "-c", strings.Replace(cmd, "helm ", helm+" ", 1))
		c.Dir, c.Env = dir, env
		out, err := c.CombinedOutput()
		return string(out), err
	}
	ran := map[string]int{}
	for _, block := range docBlocks(doc, "sh") {
		for _, cmd := range commands(block) {
			if !strings.HasPrefix(cmd, "helm ") {
				continue
			}
			sub := strings.Fields(cmd)[1]
			ran[sub]++
			out, err := run(cmd)
			switch sub {
			case "template":
				if err != nil {
					t.Errorf("%s: %v\n%s", cmd, err, out)
				} else if _, err := decodeIn(out, "svc"); err != nil {
					t.Errorf("%s: the rendered objects do not decode: %v", cmd, err)
				}
				continue
			case "install", "upgrade", "history", "rollback":
				if err == nil || !strings.Contains(out, "Kubernetes cluster unreachable") {
					t.Errorf("%s: want it to get as far as the cluster; got %v\n%s", cmd, err, out)
				}
			default:
				t.Errorf("%s: the test does not know how to run helm %s", cmd, sub)
			}
			if sub == "install" || sub == "upgrade" {
				rendered := strings.Replace(cmd, "helm "+sub+" ", "helm template ", 1) + " --kube-version " + minKubeVersion
				if out, err := run(rendered); err != nil {
					t.Errorf("%s: rendering it fails: %v\n%s", cmd, err, out)
				} else if _, err := decodeIn(out, "svc"); err != nil {
					t.Errorf("%s: the rendered objects do not decode: %v", cmd, err)
				}
			}
		}
	}
	for _, sub := range []string{"install", "template", "upgrade", "history", "rollback"} {
		if ran[sub] == 0 {
			t.Errorf("docs/operations.md has no helm %s command in a sh block", sub)
		}
	}
	t.Logf("helm commands run: %v", ran)
}

// TestOperationsDocTopics: the topics table and the creation loop name exactly the services'
// topics.
func TestOperationsDocTopics(t *testing.T) {
	raw, err := os.ReadFile(operationsDoc)
	if err != nil {
		t.Fatal(err)
	}
	want := events.Topics("")
	slices.Sort(want)
	var table []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(svc\\.[a-z]+\\.v1)` \\|").FindAllStringSubmatch(string(raw), -1) {
		table = append(table, m[1])
	}
	slices.Sort(table)
	if !slices.Equal(table, want) {
		t.Errorf("the topics table lists %v, want %v", table, want)
	}
	loop := regexp.MustCompile(`for t in ([a-z ]+); do`).FindStringSubmatch(string(raw))
	if loop == nil {
		t.Fatal("docs/operations.md has no topic creation loop")
	}
	var created []string
	for _, w := range strings.Fields(loop[1]) {
		created = append(created, "svc."+w+".v1")
	}
	slices.Sort(created)
	if !slices.Equal(created, want) {
		t.Errorf("the creation loop makes %v, want %v", created, want)
	}
}
