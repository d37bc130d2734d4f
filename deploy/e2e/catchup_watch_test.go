package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/pkg/freshness"
)

// catchUpWatch follows, from a moment on (a broker's return), what is still behind: each consumer
// group's lag as its replicas report it (freshness.Key) and each service's outbox backlog
// (svc_outbox_pending on /metrics), so that a test that waits for everything to catch up can say
// which part finished last and when.
type catchUpWatch struct {
	from   time.Time
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	// last is, per group or "<service> outbox", how long after from it was last seen behind;
	// worst its largest lag (groups) or backlog (outboxes) seen.
	last  map[string]time.Duration
	worst map[string]float64
}

// watchCatchUp starts following env's groups and outboxes from now until stop.
func watchCatchUp(t *testing.T, env *Env) *catchUpWatch {
	t.Helper()
	opts, err := redis.ParseURL(env.RedisURL)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	ctx, cancel := context.WithCancel(context.Background())
	w := &catchUpWatch{from: time.Now(), cancel: cancel, done: make(chan struct{}), last: map[string]time.Duration{}, worst: map[string]float64{}}
	client := &http.Client{Timeout: 5 * time.Second}
	go func() {
		defer close(w.done)
		defer rdb.Close()
		for i := 0; ctx.Err() == nil; i++ {
			at := time.Since(w.from)
			if all, err := rdb.HGetAll(ctx, freshness.Key).Result(); err == nil {
				for field, v := range all {
					group, _, _ := strings.Cut(field, "|")
					ms, _, _ := strings.Cut(v, ":")
					if n, err := strconv.ParseFloat(ms, 64); err == nil && n > 0 {
						w.behind(group, at, n/1000)
					}
				}
			}
			if i%4 == 0 {
				for name, urls := range env.Stack.ServiceURLs {
					if n := metricOf(ctx, client, strings.Split(urls, ",")[0]+"/metrics", "svc_outbox_pending"); n > 0 {
						w.behind(name+" outbox", at, n)
					}
				}
			}
			sleepFor(ctx, 250*time.Millisecond)
		}
	}()
	return w
}

func (w *catchUpWatch) behind(what string, at time.Duration, amount float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last[what] = at
	w.worst[what] = max(w.worst[what], amount)
}

// stop ends the watch and returns, last first, what was behind after from: each with the time
// it was last seen behind, and its largest lag in seconds (a group) or backlog in events (an
// outbox).
func (w *catchUpWatch) stop() string {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	names := make([]string, 0, len(w.last))
	for n := range w.last {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int { return int(w.last[b] - w.last[a]) })
	var out []string
	for _, n := range names {
		unit := "s lag"
		if strings.HasSuffix(n, " outbox") {
			unit = " events"
		}
		out = append(out, fmt.Sprintf("%s behind until +%.1fs (at most %.0f%s)", n, w.last[n].Seconds(), w.worst[n], unit))
	}
	if len(out) == 0 {
		return "nothing was seen behind"
	}
	return strings.Join(out, "; ")
}

// metricOf reads the value of an unlabelled metric from a Prometheus text page, -1 when it fails.
func metricOf(ctx context.Context, client *http.Client, url, name string) float64 {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return -1
	}
	resp, err := client.Do(req)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}
