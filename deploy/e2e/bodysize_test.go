package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestOversizedBodyInOneWriteGets413 sends a 2 MiB body in one write, as Python's urllib does,
// and reads the answer only once the write is done: the gateway must read and discard the body
// it refuses before it closes, or the client sees a connection reset instead of the 413.
func TestOversizedBodyInOneWriteGets413(t *testing.T) {
	t.Parallel()
	env := Start(t)
	hash, key := env.CreateObject(t, map[string]any{})
	u, err := url.Parse(env.URL)
	if err != nil {
		t.Fatal(err)
	}
	message := []byte(`{"to_hash":"` + hash + `","kind":"message","body":"` + strings.Repeat("x", 2<<20) + `"}`)
	routes := []struct {
		name, method, path, key string
	}{
		{"public ingress", "POST", "/api/messages", ""},
		{"owner route", "PUT", "/api/objects/" + hash + "/context", key},
	}
	for _, r := range routes {
		for i := range 50 {
			status, code, err := sendInOneWrite(u.Host, r.method, r.path, r.key, message)
			if err != nil {
				t.Fatalf("%s, try %d: %v", r.name, i+1, err)
			}
			if status != http.StatusRequestEntityTooLarge || code != "PAYLOAD_TOO_LARGE" {
				t.Fatalf("%s, try %d: %d %s, want 413 PAYLOAD_TOO_LARGE", r.name, i+1, status, code)
			}
		}
	}
}

// sendInOneWrite writes the whole request with one Write on a fresh connection, then reads the
// answer and returns its status and error code.
func sendInOneWrite(host, method, path, key string, body []byte) (int, string, error) {
	conn, err := net.DialTimeout("tcp", host, 5*time.Second)
	if err != nil {
		return 0, "", err
	}
	defer conn.Close()
	// A send buffer far smaller than the body, as on a real network where 2 MiB cannot be in
	// flight at once: the write completes only as fast as the gateway reads.
	if err := conn.(*net.TCPConn).SetWriteBuffer(64 << 10); err != nil {
		return 0, "", err
	}
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	var req bytes.Buffer
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n", method, path, host, len(body))
	if key != "" {
		fmt.Fprintf(&req, "Authorization: Bearer %s\r\n", key)
	}
	req.WriteString("\r\n")
	req.Write(body)
	if _, err := conn.Write(req.Bytes()); err != nil {
		return 0, "", fmt.Errorf("write: %w", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, "", fmt.Errorf("read the answer: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, "", fmt.Errorf("read the answer's body: %w", err)
	}
	var e struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &e)
	return resp.StatusCode, e.Error.Code, nil
}
