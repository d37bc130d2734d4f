package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkMCPToolOverREST measures what a tool call adds over the REST call it wraps: the same
// key calls GET /api/whoami and the whoami tool (one stateless POST /mcp each), alternately, and
// the benchmark prints both medians and their difference (goal: under 1 ms):
//
//	go test ./deploy/e2e -run '^$' -bench MCPToolOverREST -benchtime 500x
func BenchmarkMCPToolOverREST(b *testing.B) {
	env := Start(b)
	_, key := env.CreateObject(b, nil)
	client := &http.Client{Timeout: 30 * time.Second}
	call := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`)
	do := func(req *http.Request) {
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || bytes.Contains(body, []byte(`"isError":true`)) {
			b.Fatalf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, body)
		}
	}
	rest := func() {
		req, _ := http.NewRequest("GET", env.URL+"/api/whoami", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		do(req)
	}
	tool := func() {
		req, _ := http.NewRequest("POST", env.URL+"/mcp", bytes.NewReader(call))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		do(req)
	}
	for range 20 { // warm the connection pools and caches
		rest()
		tool()
	}
	restTimes, toolTimes := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		rest()
		restTimes = append(restTimes, time.Since(start))
		start = time.Now()
		tool()
		toolTimes = append(toolTimes, time.Since(start))
	}
	b.StopTimer()
	restP50, toolP50 := median(restTimes), median(toolTimes)
	b.ReportMetric(float64(restP50.Microseconds()), "rest-p50-µs")
	b.ReportMetric(float64(toolP50.Microseconds()), "tool-p50-µs")
	b.ReportMetric(float64((toolP50 - restP50).Microseconds()), "added-p50-µs")
	fmt.Printf("%s\nwhoami over %d calls each: REST p50 %v, MCP tool p50 %v, the tool adds %v (goal: under 1ms)\n",
		strings.Repeat("-", 60), b.N, restP50, toolP50, toolP50-restP50)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkMCPLargestAnswers: 16 anonymous clients call read_feed over /mcp at once, each answer
// just under the bound on one tool answer (a feed page of 16 KiB items), for -benchtime calls
// each; it prints the calls served, those told to retry, and this process's peak RSS over its RSS
// before the load (the whole suite runs in this process; goal: under +100 MiB).
//
//	go test ./deploy/e2e -run '^$' -bench MCPLargestAnswers -benchtime 40x
func BenchmarkMCPLargestAnswers(b *testing.B) {
	env := Start(b, WithEnv("RATE_PUBLIC_PER_MIN", "1000000"), WithEnv("RATE_PUBLIC_BURST", "1000000"),
		WithEnv("RATE_OWNER_PER_MIN", "1000000"), WithEnv("RATE_OWNER_BURST", "1000000"), WithEnv("RATE_FEED_POLL_INTERVAL", "0"))
	hash, key := env.CreateObject(b, nil)
	item := strings.Repeat("y", 15<<10)
	const items = 30 // 30 × 15 KiB: just under the 512 KiB bound of one route answer
	enableFeed(b, env, hash, key)
	env.Eventually(b, func() bool { // feed-svc learns of the feed from its event
		return env.Do(b, "GET", "/api/feeds/"+hash+"/items", "", nil).Status == 200
	}, "the new box's feed")
	for i := range items {
		env.Do(b, "POST", "/api/feeds/"+hash+"/items", key, map[string]any{"title": fmt.Sprintf("item %d", i), "body": item}).Expect(b, 201)
	}
	call := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_feed","arguments":{"hash":%q,"limit":%d}}}`, hash, items))
	status, body := postMCP(b, env, "", "2025-11-25", call)
	if status != 200 || bytes.Contains(body, []byte(`"isError":true`)) || len(body) < mcpMaxResultBytes/2 {
		b.Fatalf("read_feed = %d, %d bytes %.300s", status, len(body), body)
	}
	answer := len(body)
	runtime.GC()
	idle := rss()
	grown := sampleRSS()
	var served, retry atomic.Int64
	var clients sync.WaitGroup
	b.ResetTimer()
	for range 16 {
		clients.Go(func() {
			for range b.N {
				status, body := postMCP(b, env, "", "2025-11-25", call)
				switch {
				case status == 200 && !bytes.Contains(body, []byte(`"isError":true`)):
					served.Add(1)
				case bytes.Contains(body, []byte("UNAVAILABLE")) || bytes.Contains(body, []byte("RATE_LIMITED")):
					retry.Add(1)
				default:
					b.Errorf("read_feed = %d %.300s", status, body)
					return
				}
			}
		})
	}
	clients.Wait()
	b.StopTimer()
	grew := grown()
	b.ReportMetric(float64(grew>>20), "rss-growth-MiB")
	fmt.Printf("%s\n16 anonymous clients × %d read_feed calls of %d KiB answers: %d served, %d told to retry; RSS %d MiB before, peak +%d MiB (goal: under +100 MiB)\n",
		strings.Repeat("-", 60), b.N, answer>>10, served.Load(), retry.Load(), idle>>20, grew>>20)
}
