package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	feed "github.com/svcdev/svc/feed-svc/app"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

// scalePhase is one kind of data a stranger can create, with the list routes that read it: the
// scale run grows each phase's store to every size in turn and measures its routes at each.
// Other services' lists (graph, mailbox, directory, ingest) are added as phases of their own.
type scalePhase struct {
	name string
	// setup runs once on the started suite and returns the phase's state.
	setup func(tb testing.TB, env *Env) any
	// grow adds data until the phase holds size of it (it is called with growing sizes). It runs
	// beside the other phases' grow, on a goroutine of its own: it reports a failure with
	// tb.Error and returns (tb.Fatal is for the test's goroutine).
	grow func(tb testing.TB, env *Env, state any, have, size int)
	// routes are the routes to measure, given the phase's state.
	routes func(state any) []scaleRoute
}

// scaleRoute is one list route to measure: a path, read anonymously or, for an owner list, with
// key.
type scaleRoute struct {
	path, key string
}

// scaleSizes are the sizes of a run: BENCH_SCALE_SIZES (comma-separated), else the default.
func scaleSizes(def []int) []int {
	raw := os.Getenv("BENCH_SCALE_SIZES")
	if raw == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(raw, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

// BenchmarkScale preloads every phase to 1,000 and then 100,000 (BENCH_SCALE_SIZES) through the
// services' own store and consumer code, and prints p50/p99 of each list route through the
// gateway at each size with their ratio, and the process's peak RSS under 16 concurrent
// anonymous readers of each route (the all-in-one runs in this process). make bench-scale.
func BenchmarkScale(b *testing.B) {
	for range b.N {
		runScale(b, scaleSizes([]int{1000, 100000}), 100, benchWorkers)
	}
}

// TestScaleSmoke runs the scale benchmark small, so that it keeps working: every route answers
// 200 at both sizes and the figures print (with two concurrent readers, not sixteen, so that a
// busy machine running the whole suite does not time it out).
func TestScaleSmoke(t *testing.T) {
	t.Parallel()
	runScale(t, []int{20, 100}, 5, 2)
}

// scalePhases are the phases of a run, each registered by its own file's init; BENCH_SCALE_PHASES
// (comma-separated names) runs only those named.
var scalePhases []scalePhase

func init() { scalePhases = append(scalePhases, feedPhase) }

// selectedPhases are the phases BENCH_SCALE_PHASES names, all when it is unset.
func selectedPhases() []scalePhase {
	raw := os.Getenv("BENCH_SCALE_PHASES")
	if raw == "" {
		return scalePhases
	}
	var out []scalePhase
	for _, p := range scalePhases {
		if slices.Contains(strings.Split(raw, ","), p.name) {
			out = append(out, p)
		}
	}
	return out
}

type scaleFigure struct {
	p50, p99 time.Duration
	rss      int64 // peak RSS over idle under 16 readers, bytes
}

func runScale(tb testing.TB, sizes []int, samples, readers int) {
	env := Start(tb, WithEnv("LOG_LEVEL", "warn"))
	figures := map[string][]scaleFigure{}
	var order []string
	phases := selectedPhases()
	states := make([]any, len(phases))
	for i, p := range phases {
		states[i] = p.setup(tb, env)
	}
	have := 0
	for _, size := range sizes {
		growAll(tb, env, phases, states, have, size)
		have = size
		for i, p := range phases {
			for _, route := range p.routes(states[i]) {
				key := p.name + " " + route.path
				if _, ok := figures[key]; !ok {
					order = append(order, key)
				}
				figures[key] = append(figures[key], measureRoute(tb, env, route, samples, readers))
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nscale (%s): p50/p99 per list route through the gateway, and peak RSS over idle under %d concurrent anonymous readers\n",
		strings.Trim(fmt.Sprint(sizes), "[]"), readers)
	fmt.Fprintf(&b, "%-40s", "route")
	for _, s := range sizes {
		fmt.Fprintf(&b, " %22s", fmt.Sprintf("p50/p99 @%d", s))
	}
	fmt.Fprintf(&b, " %8s %s\n", "p50 x", "peak RSS +MiB")
	for _, key := range order {
		f := figures[key]
		fmt.Fprintf(&b, "%-40s", key)
		var rss []string
		for _, one := range f {
			fmt.Fprintf(&b, " %22s", fmt.Sprintf("%s/%s", ms(one.p50), ms(one.p99)))
			rss = append(rss, strconv.FormatInt(one.rss>>20, 10))
		}
		ratio := float64(f[len(f)-1].p50) / float64(max(f[0].p50, 1))
		fmt.Fprintf(&b, " %8.2f %s\n", ratio, strings.Join(rss, " / "))
	}
	fmt.Print(b.String())
	tb.Log(b.String())
}

// growAll grows every phase from have to size, the phases at once: each writes its own
// service's database (a file of its own on FerretDB-SQLite), so that they do not wait on one
// another's writes. Within a phase one writer per database: SQLite takes one writer at a time
// per file, so that more writers to one file only queue, and on a busy machine a queued insert
// outlasts the client's 15 s timeout and fails the run. It logs how long each phase took (and
// prints it, in a benchmark, as the run goes).
func growAll(tb testing.TB, env *Env, phases []scalePhase, states []any, have, size int) {
	start := time.Now()
	took := make([]string, len(phases))
	var wg sync.WaitGroup
	for i, p := range phases {
		wg.Go(func() {
			began := time.Now()
			p.grow(tb, env, states[i], have, size)
			took[i] = fmt.Sprintf("%s %s", p.name, time.Since(began).Round(time.Millisecond))
		})
	}
	wg.Wait()
	if tb.Failed() {
		tb.FailNow()
	}
	line := fmt.Sprintf("scale: preloaded %d in %s (%s)", size, time.Since(start).Round(time.Millisecond), strings.Join(took, ", "))
	if _, ok := tb.(*testing.B); ok {
		fmt.Println(line)
	}
	tb.Log(line)
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) + "ms"
}

// measureRoute reads route samples times one after another (p50, p99), then with readers
// concurrent readers for a while, sampling the process's RSS.
func measureRoute(tb testing.TB, env *Env, route scaleRoute, samples, readers int) scaleFigure {
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: benchWorkers}}
	get := func() error {
		req, err := http.NewRequest("GET", env.URL+route.path, nil)
		if err != nil {
			return err
		}
		if route.key != "" {
			req.Header.Set("Authorization", "Bearer "+route.key)
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %d", route.path, resp.StatusCode)
		}
		return nil
	}
	var took []time.Duration
	for range samples {
		start := time.Now()
		if err := get(); err != nil {
			tb.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	f := scaleFigure{p50: took[len(took)/2], p99: took[min(len(took)-1, len(took)*99/100)]}
	grew := sampleRSS()
	if _, err := concurrentlyWith(readers, samples*readers/4+readers, func(int) error { return get() }); err != nil {
		tb.Fatal(err)
	}
	f.rss = grew()
	return f
}

// sampleRSS samples this process's RSS from now on; the function it returns stops sampling and
// answers the peak's growth over the RSS when sampling began.
func sampleRSS() (grew func() int64) {
	idle := rss()
	var peak atomic.Int64
	stop := make(chan struct{})
	var sampler sync.WaitGroup
	sampler.Go(func() {
		for {
			if r := rss(); r > peak.Load() {
				peak.Store(r)
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	})
	return func() int64 {
		close(stop)
		sampler.Wait()
		return max(0, peak.Load()-idle)
	}
}

// rss is this process's resident set size in bytes (Linux), 0 elsewhere.
func rss() int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// feedState is the feed phase's bench box (a real object, so that the gateway resolves it).
type feedState struct {
	hash, objectID string
}

// feedPhase: network events, objects and feed items, loaded through feed-svc's own consumer in
// large batches (feed.Preloader): a tenth of each size are new objects, a tenth messages
// to them, and the rest items, half of them in the bench box's feed.
var feedPhase = scalePhase{
	name: "feed",
	setup: func(tb testing.TB, env *Env) any {
		hash, key := env.CreateObject(tb, map[string]any{"initial_llm_txt": "# Scale box\n"})
		enableFeed(tb, env, hash, key)
		id := env.Internal(tb, "identity-svc", "GET", "/internal/v1/resolve/"+hash)["object_id"].(string)
		env.Eventually(tb, func() bool {
			return env.Do(tb, "GET", "/api/feed?kind=new_svc", "", nil).Expect(tb, 200).JSON(tb)["total"] == float64(1)
		}, "the bench box's creation is projected")
		return &feedState{hash: hash, objectID: id}
	},
	grow: func(tb testing.TB, env *Env, state any, have, size int) {
		st := state.(*feedState)
		be := testkit.Backends(tb)
		client, db, err := mongox.Connect(context.Background(), be.MongoURI, env.Name+"_feed_svc")
		if err != nil {
			tb.Error(err)
			return
		}
		defer client.Disconnect(context.Background())
		// One preloader, in order: its projection keeps the objects' visibility between loads.
		p := feed.NewPreloader(db)
		var evs []events.Event
		for i := have; i < size; i++ {
			evs = append(evs, scaleEvents(tb, st, i)...)
			if len(evs) >= 1000 || i == size-1 {
				if err := p.Load(context.Background(), evs); err != nil {
					tb.Error(err)
					return
				}
				evs = evs[:0]
			}
		}
	},
	routes: func(state any) []scaleRoute {
		st := state.(*feedState)
		var out []scaleRoute
		for _, p := range []string{"/api/feed", "/api/feed?unique=1", "/feed.txt", "/api/activity", "/api/stats",
			"/api/feeds/" + st.hash + "/items", "/" + st.hash} {
			out = append(out, scaleRoute{path: p})
		}
		return out
	},
}

// scaleEvents are the events of the i-th unit of the feed phase: units of ten share an object,
// created by the first.
func scaleEvents(tb testing.TB, st *feedState, i int) []events.Event {
	obj := fmt.Sprintf("obj_scale_%d", i/10*10)
	hash := "svc_scale_" + strconv.Itoa(i/10*10)
	var p events.Pending
	switch {
	case i%10 == 0:
		p = events.MustNew(events.TopicIdentity, events.ObjectCreated, obj, hash, "",
			contract.ObjectCreatedData{Object: contract.Object{ObjectID: obj, Hash: hash, Visibility: "public", Title: "Scale " + hash}})
	case i%10 == 1:
		p = events.MustNew(events.TopicMailbox, events.MessageCreated, obj, hash, "", contract.MessageCreatedData{MessageID: fmt.Sprint("msg_", i)})
	default:
		box, boxHash := obj, hash
		if i%2 == 0 {
			box, boxHash = st.objectID, st.hash
		}
		author := st.hash
		p = events.MustNew(events.TopicFeed, events.FeedItemPublished, box, boxHash, "", contract.FeedItemPublishedData{
			ItemID: apikey.NewID("itm"), Title: fmt.Sprintf("scale item %d", i), Body: strings.Repeat("body ", 200),
			Tags: []string{"working"}, AuthorObjectID: st.objectID, AuthorHash: &author, AuthorName: "Scale box",
			PostedAt: time.Now().UTC().Format(time.RFC3339Nano)})
	}
	var ev events.Event
	if err := json.Unmarshal([]byte(p.Payload), &ev); err != nil {
		tb.Error(err)
		return nil
	}
	return []events.Event{ev}
}

// concurrentlyWith runs op n times on workers goroutines.
func concurrentlyWith(workers, n int, op func(i int) error) (int, error) {
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				if err := op(i); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		return 0, err
	}
	return n, nil
}
