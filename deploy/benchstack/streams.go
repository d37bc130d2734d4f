package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// benchStreams prints what the event streams cost: how long an acknowledged message takes to
// reach its recipient's open stream (POST /api/messages answered → SSE event received) at a
// steady rate, and the process memory each open stream holds at n open streams.
func (s *benchStack) benchStreams(ctx context.Context, p pair, rate int, d time.Duration, n int, out io.Writer) error {
	p50, p99, got, sent, err := s.streamLatency(ctx, p, rate, d)
	if err != nil {
		return fmt.Errorf("stream latency: %w", err)
	}
	fmt.Fprintf(out, "event → stream (POST /api/messages answered → SSE event) at %d messages/s (%.0f/s offered): p50 %s, p99 %s (%d of %d events received)\n",
		rate, float64(sent)/d.Seconds(), p50.Round(100*time.Microsecond), p99.Round(100*time.Microsecond), got, sent)
	perStream, goroutines, err := s.streamMemory(ctx, p, n)
	if err != nil {
		return fmt.Errorf("stream memory: %w", err)
	}
	fmt.Fprintf(out, "memory per open stream at %d open streams: %.1f KiB (heap + stacks, after GC) and %.1f goroutines, for the whole\n"+
		"  all-in-one process: gateway (proxy), feed-svc (reader) and the benchmark's own loopback sockets; the gateway's share is below it\n",
		n, perStream/1024, goroutines)
	return nil
}

// openStream connects an SSE stream of p's recipient with a bare HTTP/1.1 request on its own
// connection and returns the connection, reading past the response headers.
func (s *benchStack) openStream(ctx context.Context, p pair) (net.Conn, *bufio.Reader, error) {
	u, err := url.Parse(s.st.GatewayURL)
	if err != nil {
		return nil, nil, err
	}
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(conn, "GET /api/objects/%s/events?types=message HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nAccept: text/event-stream\r\n\r\n",
		p.to, u.Host, p.toKey)
	r := bufio.NewReaderSize(conn, 1024)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		_ = conn.Close()
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusOK {
		_ = conn.Close()
		return nil, nil, fmt.Errorf("stream answered %d", resp.StatusCode)
	}
	return conn, bufio.NewReader(resp.Body), nil
}

// readEvents calls seen with the message id of each event body reads, until body ends.
func readEvents(body *bufio.Reader, seen func(messageID string)) {
	for {
		line, err := body.ReadString('\n')
		if err != nil {
			return
		}
		var ev struct {
			Data struct {
				MessageID string `json:"message_id"`
			} `json:"data"`
		}
		if strings.HasPrefix(line, "data: ") && json.Unmarshal([]byte(line[len("data: "):]), &ev) == nil {
			seen(ev.Data.MessageID)
		}
	}
}

func (s *benchStack) streamLatency(ctx context.Context, p pair, rate int, d time.Duration) (p50, p99 time.Duration, got, sent int, err error) {
	conn, body, err := s.openStream(ctx, p)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	defer conn.Close()
	var mu sync.Mutex
	answered := map[string]time.Time{}
	arrived := map[string]time.Time{}
	go readEvents(body, func(messageID string) {
		mu.Lock()
		arrived[messageID] = time.Now()
		mu.Unlock()
	})
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for time.Now().Before(end) {
		<-tick.C
		sent++
		wg.Go(func() {
			_, raw, err := s.do(ctx, "POST", "/api/messages", "", map[string]any{"from_hash": p.from, "to_hash": p.to,
				"thread_id": p.thread, "kind": "note", "body": "stream latency"}, nil, 201)
			at := time.Now()
			var m struct {
				ID string `json:"id"`
			}
			if err == nil && json.Unmarshal(raw, &m) == nil {
				mu.Lock()
				answered[m.ID] = at
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	time.Sleep(2 * time.Second) // the last events' way to the stream
	mu.Lock()
	defer mu.Unlock()
	var lat []time.Duration
	for id, a := range answered {
		if r, ok := arrived[id]; ok {
			lat = append(lat, max(0, r.Sub(a)))
		}
	}
	if len(lat) == 0 {
		return 0, 0, 0, sent, fmt.Errorf("no event reached the stream")
	}
	slices.Sort(lat)
	return quantile(lat, 0.50), quantile(lat, 0.99), len(lat), sent, nil
}

// streamMemory opens n streams and measures the process's heap and stacks (after GC) and
// goroutines before and after, per stream.
func (s *benchStack) streamMemory(ctx context.Context, p pair, n int) (bytesPer, goroutinesPer float64, err error) {
	measure := func() (uint64, int) {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse + m.StackInuse, runtime.NumGoroutine()
	}
	time.Sleep(time.Second)
	mem0, g0 := measure()
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for range n {
		c, _, err := s.openStream(ctx, p)
		if err != nil {
			return 0, 0, fmt.Errorf("after %d streams: %w", len(conns), err)
		}
		conns = append(conns, c)
	}
	time.Sleep(2 * time.Second)
	mem1, g1 := measure()
	return (float64(mem1) - float64(mem0)) / float64(n), float64(g1-g0) / float64(n), nil
}
