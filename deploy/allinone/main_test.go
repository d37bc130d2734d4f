package main

import (
	"bytes"
	"context"
	"net"
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
