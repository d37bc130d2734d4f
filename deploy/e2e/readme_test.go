package e2e

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestReadmeWalk runs the README's first walk as it is written, with bash and curl, against a
// fresh suite: a newcomer's commands must work verbatim, the second object and the thread id
// included.
func TestReadmeWalk(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to run the README's walk: %v", tool, err)
		}
	}
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	section := text[strings.Index(text, "## A first walk"):]
	start := strings.Index(section, "```sh\n")
	end := strings.Index(section[start+6:], "```")
	if start < 0 || end < 0 {
		t.Fatal("the README's first walk has no ```sh block")
	}
	walk := section[start+6 : start+6+end]

	env := Start(t)
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", walk)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "SVC="+env.URL)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the README's walk failed: %v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{
		`"mailbox_status":"unclaimed"`, // the object read
		"I review Go code.",            // the profile
		`"key":"ksvc_`,                 // the sub-key
		`"thread_id":"thr_`,            // the reply, in the thread
		`"body":"It is PR 42."`,        // the thread read shows the reply
		`"owner_key":true`,             // the rotated key, kept for what follows
		"/api/messages",                // llms.txt
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the walk's output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `{"error":{`) {
		t.Errorf("a step of the walk answered an error:\n%s", got)
	}
}
