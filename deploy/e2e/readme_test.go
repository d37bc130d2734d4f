package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// readmeWalk is the shell blocks of the README's first walk, in order, as one script.
func readmeWalk(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	i := strings.Index(text, "## A first walk")
	if i < 0 {
		t.Fatal("the README has no first walk")
	}
	section := text[i+len("## A first walk"):]
	if j := strings.Index(section, "\n## "); j >= 0 {
		section = section[:j]
	}
	var blocks []string
	for {
		start := strings.Index(section, "```sh\n")
		if start < 0 {
			break
		}
		end := strings.Index(section[start+6:], "```")
		if end < 0 {
			t.Fatal("a ```sh block of the README's walk is not closed")
		}
		blocks = append(blocks, section[start+6:start+6+end])
		section = section[start+6+end+3:]
	}
	if len(blocks) < 2 {
		t.Fatalf("the README's walk has %d shell blocks, want the curl walk and the svc command's", len(blocks))
	}
	return strings.Join(blocks, "\n")
}

// TestReadmeWalk runs every shell block of the README's first walk as it is written, in order,
// in one bash from the repository's root, with curl and `go run`, against a fresh all-in-one:
// a newcomer's commands must work verbatim. The last block's `svc watch` runs until stopped: the
// test sends Ada a message and expects watch to print it, with its thread_id.
func TestReadmeWalk(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "sed", "grep", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to run the README's walk: %v", tool, err)
		}
	}
	walk := readmeWalk(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}

	// A fresh all-in-one, as the walk's reader runs it (its own binary and data directory).
	addr := freeAddr(t)
	startAllinone(t, buildAllinone(t), t.TempDir(), addr, "", &syncBuffer{})
	env := crashEnv(t, addr, &syncBuffer{})
	out := &syncBuffer{}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", walk)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "SVC="+env.URL)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // go run's child goes with it
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var stopped sync.Once
	stop := func() {
		stopped.Do(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		})
	}
	defer stop()

	// The svc command prints an api_key only for its create, the last block's first command;
	// its compilation by go run takes as long as the machine needs.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Minute)
		for !cond() {
			select {
			case err := <-exited:
				exited <- err
				t.Fatalf("the README's walk ended (%v) before %s:\n%s", err, what, out.String())
			case <-time.After(100 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("the README's walk has not reached %s in 5 minutes:\n%s", what, out.String())
			}
		}
	}
	waitFor("the svc command's create", func() bool { return strings.Contains(out.String(), `"api_key":"svc_sk_`) })
	ada := regexp.MustCompile(`"hash":"(svc_[^"]+)"`).FindStringSubmatch(out.String())
	if ada == nil {
		t.Fatalf("the walk printed no object:\n%s", out.String())
	}
	// watch prints what arrives once it follows: send until a message shows.
	cy, _ := env.CreateObject(t, nil)
	sent := 0
	var thread string
	waitFor("watch printing the next message", func() bool {
		sent++
		body := "Are you there? (" + strconv.Itoa(sent) + ")"
		thread = Str(t, env.Do(t, "POST", "/api/messages", "", map[string]any{"from_hash": cy, "to_hash": ada[1], "kind": "note",
			"body": body}).Expect(t, 201).JSON(t), "thread_id")
		time.Sleep(200 * time.Millisecond)
		return strings.Contains(out.String(), `"body":"Are you there?`)
	})
	stop()
	got := out.String()
	for _, want := range []string{
		`"mailbox_status":"unclaimed"`, // the object read
		"I review Go code.",            // the profile
		`"key":"ksvc_`,                 // the sub-key
		`"thread_id":"thr_`,            // the reply, in the thread
		`"message_count":2`,            // the mailbox lists both messages
		`"body":"It is PR 42."`,        // the thread read shows the reply
		`"owner_key":true`,             // the rotated key, kept for what follows
		`"openapi":"3.1`,               // the OpenAPI document
		"/api/messages",                // llms.txt
		`"body":"And PR 43?"`,          // the svc command's send
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the walk's output lacks %q:\n%s", want, got)
		}
	}
	if !regexp.MustCompile(`"thread_id":"thr_[^"]+","from_hash":"` + cy + `","to_hash":"` + ada[1] + `","kind":"note","body":"Are you there\?`).MatchString(got) {
		t.Errorf("watch did not print the message it received with its thread_id (last sent in %s):\n%s", thread, got)
	}
	if strings.Contains(got, `{"error":{`) {
		t.Errorf("a step of the walk answered an error:\n%s", got)
	}
}
