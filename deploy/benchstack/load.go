package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/event"

	"github.com/svcdev/svc/pkg/httpx"
)

// commands counts the store commands of every service: those sent for a request (their context
// carries a request id) and the rest, the relay's and the consumers' background work.
type commands struct {
	request, background atomic.Int64
	// handled counts the background inserts: the consumers' writes (the relay and the sweeps only
	// read and delete).
	handled atomic.Int64
	// byName counts the background commands by database, command and collection, while counting.
	mu       sync.Mutex
	counting bool
	byName   map[string]int
	// lastInsert is when each service last inserted in the background: when its consumers last
	// wrote.
	lastInsert map[string]time.Time
}

func (c *commands) monitor() *event.CommandMonitor {
	return &event.CommandMonitor{Started: func(ctx context.Context, e *event.CommandStartedEvent) {
		if httpx.RequestIDFrom(ctx) != "" {
			c.request.Add(1)
			return
		}
		c.background.Add(1)
		db := e.DatabaseName[strings.IndexByte(e.DatabaseName, '_')+1:]
		c.mu.Lock()
		defer c.mu.Unlock()
		if e.CommandName == "insert" {
			c.handled.Add(1)
			if c.lastInsert == nil {
				c.lastInsert = map[string]time.Time{}
			}
			c.lastInsert[db] = time.Now()
		}
		if c.counting {
			coll := ""
			if el, err := e.Command.IndexErr(0); err == nil {
				coll, _ = el.Value().StringValueOK()
			}
			c.byName[db+"."+e.CommandName+" "+coll]++
		}
	}}
}

// settle waits until the consumers have written nothing for 3 s, for at most limit; it returns
// how long it waited and whether they settled.
func (c *commands) settle(ctx context.Context, limit time.Duration) (time.Duration, bool) {
	start, last, quiet := time.Now(), c.handled.Load(), 0
	for time.Since(start) < limit && ctx.Err() == nil {
		time.Sleep(time.Second)
		if n := c.handled.Load(); n != last {
			last, quiet = n, 0
			continue
		}
		if quiet++; quiet >= 3 {
			return time.Since(start) - 3*time.Second, true
		}
	}
	return time.Since(start), false
}

// lastWrites lists, for each service whose consumers wrote after since, how long after since
// they last did, the latest first.
func (c *commands) lastWrites(since time.Time) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	type last struct {
		service string
		after   time.Duration
	}
	var all []last
	for s, t := range c.lastInsert {
		if t.After(since) {
			all = append(all, last{s, t.Sub(since)})
		}
	}
	slices.SortFunc(all, func(a, b last) int { return int(b.after - a.after) })
	parts := make([]string, len(all))
	for i, l := range all {
		parts[i] = fmt.Sprintf("%s %s", l.service, l.after.Round(100*time.Millisecond))
	}
	return strings.Join(parts, ", ")
}

// count starts counting the background commands by name afresh, or stops counting them.
func (c *commands) count(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counting = on
	if on {
		c.byName = map[string]int{}
	}
}

// top lists the n most frequent background commands counted, per request of requests (or per
// second of an idle window).
func (c *commands) top(requests, n int) string {
	all := c.counted()
	var parts []string
	for _, e := range all[:min(n, len(all))] {
		parts = append(parts, fmt.Sprintf("%s %.2f", e.name, float64(e.n)/float64(max(1, requests))))
	}
	return strings.Join(parts, ", ")
}

// breakdown lists every background command counted, per request of requests: one line per
// service, its total first, then each command and collection, the most frequent first.
func (c *commands) breakdown(requests int) string {
	per := func(n int) float64 { return float64(n) / float64(max(1, requests)) }
	totals := map[string]int{}
	lines := map[string][]string{}
	for _, e := range c.counted() {
		service, rest, _ := strings.Cut(e.name, ".")
		totals[service] += e.n
		lines[service] = append(lines[service], fmt.Sprintf("%s %.2f", rest, per(e.n)))
	}
	var out strings.Builder
	for _, s := range slices.SortedFunc(maps.Keys(totals), func(a, b string) int { return totals[b] - totals[a] }) {
		fmt.Fprintf(&out, "  %-12s %5.2f: %s\n", s, per(totals[s]), strings.Join(lines[s], ", "))
	}
	return out.String()
}

// namedCount is how many background commands of one name (service.command collection) were counted.
type namedCount struct {
	name string
	n    int
}

// counted is the background commands counted by name, the most frequent first.
func (c *commands) counted() []namedCount {
	c.mu.Lock()
	defer c.mu.Unlock()
	all := make([]namedCount, 0, len(c.byName))
	for k, v := range c.byName {
		all = append(all, namedCount{k, v})
	}
	slices.SortFunc(all, func(a, b namedCount) int { return cmp.Or(b.n-a.n, strings.Compare(a.name, b.name)) })
	return all
}

// result is one load phase's figures.
type result struct {
	Name      string
	Requests  int
	Errors    int
	Elapsed   time.Duration
	Latencies []time.Duration
	// Commands is the store commands sent for the phase's requests; -1 when not counted (a raw
	// driver call outside the services).
	Commands   int64
	Background int64
	FirstError string
	// CPU is what the stack used during the phase, its background work included.
	CPU cpuUse
}

// cpuPerRequest is the CPU of the phase per request, in seconds.
func (r result) cpuPerRequest() cpuUse {
	n := float64(max(1, r.Requests))
	return cpuUse{self: r.CPU.self / n, redis: r.CPU.redis / n, postgres: r.CPU.postgres / n}
}

func (r result) rps() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

// quantile is the q-quantile of sorted durations, 0 of none.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(q*float64(len(sorted))))]
}

func (r result) perRequest() string {
	if r.Commands < 0 || r.Requests == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(r.Commands)/float64(r.Requests))
}

// op is one request of a phase: worker w's i-th; it returns an error for a failed request.
type op func(ctx context.Context, w, i int) error

// runPhase runs op on workers goroutines until d has passed, and counts the store commands.
func runPhase(ctx context.Context, name string, d time.Duration, workers int, cmds *commands, counted bool, fn op) result {
	req0, bg0 := cmds.request.Load(), cmds.background.Load()
	deadline := time.Now().Add(d)
	var mu sync.Mutex
	res := result{Name: name}
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			var lat []time.Duration
			errs, first := 0, ""
			for i := 0; time.Now().Before(deadline) && ctx.Err() == nil; i++ {
				t := time.Now()
				if err := fn(ctx, w, i); err != nil {
					errs++
					if first == "" {
						first = err.Error()
					}
					continue
				}
				lat = append(lat, time.Since(t))
			}
			mu.Lock()
			defer mu.Unlock()
			res.Latencies = append(res.Latencies, lat...)
			res.Errors += errs
			if res.FirstError == "" {
				res.FirstError = first
			}
		})
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	res.Requests = len(res.Latencies)
	slices.Sort(res.Latencies)
	res.Commands, res.Background = cmds.request.Load()-req0, cmds.background.Load()-bg0
	if !counted {
		res.Commands = -1
	}
	return res
}
