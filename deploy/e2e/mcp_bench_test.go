package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
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
