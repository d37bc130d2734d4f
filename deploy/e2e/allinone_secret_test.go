package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// allinoneFails runs the binary on dataDir and returns what it printed, failing the test unless
// it stops with an error by itself.
func allinoneFails(t *testing.T, bin, dataDir, addr string, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := allinoneCommand(bin, dataDir, addr, "", extra...)
	killable := exec.CommandContext(ctx, cmd.Path)
	killable.Env = cmd.Env
	out, err := killable.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the all-in-one did not stop by itself:\n%s", out)
	}
	if err == nil {
		t.Fatalf("the all-in-one started and stopped without an error:\n%s", out)
	}
	return string(out)
}

// TestAllinoneKeepsItsSigningKeysSecret: on a fresh data directory the all-in-one makes its
// SIGNING_KEYS_SECRET and keeps it, so that after a restart svc still signs with the keys it
// sealed (verified against jwks.json through the gateway). With the secret file lost, or replaced
// by another secret, it refuses to start and says which, instead of turning signing off.
func TestAllinoneKeepsItsSigningKeysSecret(t *testing.T) {
	bin := buildAllinone(t)
	dataDir, addr, log := t.TempDir(), freeAddr(t), &syncBuffer{}
	noSecret := "SIGNING_KEYS_SECRET=" // the secret the data directory keeps, not the suites' own
	first := startAllinone(t, bin, dataDir, addr, "", log, noSecret)
	e := crashEnv(t, addr, log)
	carol, carolKey := e.CreateObject(t, nil)
	bob, bobKey := e.CreateObject(t, nil)
	svcSignsFor(t, e, carol, carolKey, bob, bobKey)
	first.stop(t)

	path := filepath.Join(dataDir, "signing-keys-secret")
	kept, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the generated secret is not kept: %v", err)
	}
	second := startAllinone(t, bin, dataDir, addr, "", log, noSecret)
	svcSignsFor(t, e, carol, carolKey, bob, bobKey)
	second.stop(t)

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if out := allinoneFails(t, bin, dataDir, addr, noSecret); !strings.Contains(out, path+" is missing") || !strings.Contains(out, "SIGNING_KEYS_SECRET") {
		t.Fatalf("start with the secret file lost:\n%s", out)
	}
	if _, err := os.Stat(path); err == nil {
		t.Fatal("a new secret was written in place of the lost one")
	}
	if err := os.WriteFile(path, []byte(strings.Repeat("42", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := allinoneFails(t, bin, dataDir, addr, noSecret); !strings.Contains(out, "SIGNING_KEYS_SECRET is missing or wrong") {
		t.Fatalf("start with another secret:\n%s", out)
	}
	if err := os.WriteFile(path, kept, 0o600); err != nil {
		t.Fatal(err)
	}
	third := startAllinone(t, bin, dataDir, addr, "", log, noSecret)
	svcSignsFor(t, e, bob, bobKey, carol, carolKey)
	third.stop(t)
}
