package httpx

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
)

// TestLingeringCloseDeliversTheAnswer: a handler refuses a 2 MiB body without reading it, and the
// client writes the whole request in one write before it reads, through a send buffer far
// smaller than the body, as on a real network. The client must read the 413 every time, and,
// since the engine read the rest of the body, may send its next request on the same connection.
func TestLingeringCloseDeliversTheAnswer(t *testing.T) {
	t.Parallel()
	e := NewEngine(slog.New(slog.DiscardHandler), nil)
	e.POST("/refuse", func(c *gin.Context) { Abort(c, TooLarge(MaxBodyBytes)) })
	e.GET("/ok", func(c *gin.Context) { c.Status(http.StatusNoContent) })
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	host := srv.Listener.Addr().String()
	body := bytes.Repeat([]byte("x"), 2<<20)
	for i := range 20 {
		conn, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		if err := conn.(*net.TCPConn).SetWriteBuffer(64 << 10); err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		var req bytes.Buffer
		fmt.Fprintf(&req, "POST /refuse HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n", host, len(body))
		req.Write(body)
		if _, err := conn.Write(req.Bytes()); err != nil {
			t.Fatalf("try %d: write: %v", i+1, err)
		}
		r := bufio.NewReader(conn)
		status := readStatus(t, r, i)
		if status != http.StatusRequestEntityTooLarge {
			t.Fatalf("try %d: status %d, want 413", i+1, status)
		}
		fmt.Fprintf(conn, "GET /ok HTTP/1.1\r\nHost: %s\r\n\r\n", host)
		if status := readStatus(t, r, i); status != http.StatusNoContent {
			t.Fatalf("try %d: the next request on the connection: status %d, want 204", i+1, status)
		}
		conn.Close()
	}
}

func readStatus(t *testing.T, r *bufio.Reader, try int) int {
	t.Helper()
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("try %d: read the answer: %v", try+1, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestLingeringCloseLeavesExpectContinueAlone: a client that asked for 100-continue has sent no
// body and sends none once refused, so the engine answers the 413 and closes without waiting for
// the body: the client sees the close well before a linger would have ended.
func TestLingeringCloseLeavesExpectContinueAlone(t *testing.T) {
	t.Parallel()
	e := NewEngine(slog.New(slog.DiscardHandler), nil)
	e.POST("/refuse", func(c *gin.Context) { Abort(c, TooLarge(MaxBodyBytes)) })
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "POST /refuse HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", 2<<20)
	r := bufio.NewReader(conn)
	if status := readStatus(t, r, 0); status != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413 without 100 Continue", status)
	}
	_ = conn.SetReadDeadline(time.Now().Add(LingerTime - time.Second))
	if n, err := r.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("after the 413: read %d bytes, %v; want the server to close (EOF) instead of waiting for the body", n, err)
	}
}
