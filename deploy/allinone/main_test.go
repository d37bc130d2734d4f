package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBusyAddressIsNamed: a taken SVC_ADDR stops the start at once with a message that names the
// variable and what to do, before any backend starts.
func TestBusyAddressIsNamed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	t.Setenv("SVC_ADDR", ln.Addr().String())
	t.Setenv("SVC_DATA_DIR", t.TempDir())
	err = realMain(context.Background())
	if err == nil || !strings.Contains(err.Error(), "SVC_ADDR "+ln.Addr().String()+" is already in use") {
		t.Fatalf("err = %v; want one naming SVC_ADDR and the busy address", err)
	}
}

// TestGreetingNamesWhereToGo: the plain start-up lines name the gateway, the data directory and
// the next steps.
func TestGreetingNamesWhereToGo(t *testing.T) {
	var out bytes.Buffer
	greet(&out, "http://127.0.0.1:8080", "./data")
	for _, want := range []string{"svc is ready at http://127.0.0.1:8080", "data in ./data", "/llms.txt", "POST http://127.0.0.1:8080/api/objects"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("greeting lacks %q:\n%s", want, out.String())
		}
	}
}

// TestSigningKeysSecretIsKeptAndNeverReplaced: a fresh data directory gets a secret that later
// starts reuse; a data directory whose database holds data but whose secret file is gone stops
// the start, naming the file and SIGNING_KEYS_SECRET, instead of sealing with a new secret.
func TestSigningKeysSecretIsKeptAndNeverReplaced(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{DataDir: dir}
	first, err := signingKeysSecret(cfg)
	if err != nil || len(first) != 64 {
		t.Fatalf("fresh data dir: %q, %v", first, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "mongo"), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mongo", "svc.sqlite"), []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	if again, err := signingKeysSecret(cfg); err != nil || again != first {
		t.Fatalf("restart: %q, %v; want the kept secret", again, err)
	}
	if given, err := signingKeysSecret(Config{DataDir: dir, SigningKeysSecret: "given"}); err != nil || given != "given" {
		t.Fatalf("given: %q, %v", given, err)
	}
	path := filepath.Join(dir, signingKeysSecretFile)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	_, err = signingKeysSecret(cfg)
	if err == nil || !strings.Contains(err.Error(), path+" is missing") || !strings.Contains(err.Error(), "SIGNING_KEYS_SECRET") {
		t.Fatalf("lost secret file with data: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a new secret was written over the lost one: %v", err)
	}
	// The whole start stops there, before any backend starts.
	t.Setenv("SVC_ADDR", "127.0.0.1:0")
	t.Setenv("SVC_DATA_DIR", dir)
	t.Setenv("SIGNING_KEYS_SECRET", "")
	if err := realMain(context.Background()); err == nil || !strings.Contains(err.Error(), path+" is missing") {
		t.Fatalf("start with a lost secret file: %v", err)
	}
}
