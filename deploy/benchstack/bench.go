package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/deploy/internal/preload"
	"github.com/svcdev/svc/deploy/stack"
	"github.com/svcdev/svc/pkg/apikey"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/mongox"
)

const (
	topicPrefix = "bench."
	// body is a typical agent note, about 0.5 KiB.
	body = "lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore " +
		"et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip " +
		"ex ea commodo consequat. Duis aute irure dolor in reprehenderit in voluptate velit esse cillum dolore eu " +
		"fugiat nulla pariatur. Excepteur sint occaecat cupidatat non proident, sunt in culpa qui officia deserunt " +
		"mollit anim id est laborum. Sed ut perspiciatis unde omnis iste natus error sit voluptatem accusantium."
)

// unlimited turns the gateway's rate limits out of the way of the load.
var unlimited = map[string]string{
	"SIGNING_KEYS_SECRET":  "6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b",
	"RATE_OBJECTS_PER_MIN": "100000000", "RATE_OBJECTS_BURST": "100000000",
	"RATE_MESSAGES_PER_MIN": "100000000", "RATE_MESSAGES_BURST": "100000000",
	"RATE_RECIPIENT_PER_MIN": "100000000", "RATE_RECIPIENT_BURST": "100000000",
	"RATE_PUBLIC_PER_MIN": "100000000", "RATE_PUBLIC_BURST": "100000000",
	"RATE_OWNER_PER_MIN": "100000000", "RATE_OWNER_BURST": "100000000",
	"RATE_AUTH_IP_PER_MIN": "100000000", "RATE_AUTH_IP_BURST": "100000000",
	"RATE_STREAMS_PER_KEY": "100000", "RATE_STREAMS_PER_IP": "100000",
	// The send phases measure the stack past what its consumers keep up with, and how long the
	// backlog then takes to drain: the front door's hold on writes (LAG_LIMIT) is off too.
	"LAG_LIMIT": "0",
	"LOG_LEVEL": "warn",
}

// benchStack is the running stack with the clients the load needs.
type benchStack struct {
	// prefix names this run's databases, so that runs on one PostgreSQL database never meet.
	prefix string
	be     *backends
	st     *stack.Stack
	cmds   *commands
	http   *http.Client
	mongo  *mongo.Client
}

// startStack starts the stack with the rate limits out of the way and env besides.
func startStack(ctx context.Context, be *backends, cmds *commands, env map[string]string) (*benchStack, error) {
	prefix := fmt.Sprintf("bench%d_", time.Now().Unix())
	all := maps.Clone(unlimited)
	maps.Copy(all, env)
	st, err := stack.Start(ctx, stack.Options{
		MongoURI: be.MongoURI, Brokers: be.Brokers, RedisURL: be.RedisURL, DatabasePrefix: prefix,
		TopicPrefix: topicPrefix, Env: all, CommandMonitor: cmds.monitor(),
		// Warnings and errors only, to stderr.
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return nil, err
	}
	mc, _, err := mongox.Connect(ctx, be.MongoURI, "admin")
	if err != nil {
		_ = st.Stop()
		return nil, err
	}
	return &benchStack{prefix: prefix, be: be, st: st, cmds: cmds, mongo: mc,
		http: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}}, nil
}

// close stops the stack and drops its databases (PostgreSQL would keep them).
func (s *benchStack) close(keep bool) {
	_ = s.st.Stop()
	ctx := context.Background()
	if names, err := s.mongo.ListDatabaseNames(ctx, bson.D{}); err == nil && !keep {
		for _, db := range names {
			if strings.HasPrefix(db, s.prefix) {
				_ = s.mongo.Database(db).Drop(ctx)
			}
		}
	}
	_ = s.mongo.Disconnect(ctx)
}

// pair is a sender and a recipient with a thread between them.
type pair struct {
	from, to, toKey, thread, etag string
}

// do sends a request through the gateway and checks its status; it returns the answer and its
// body, also with the error of an unexpected status (a 503's Retry-After is read from it).
func (s *benchStack) do(ctx context.Context, method, path, key string, body any, headers map[string]string, want int) (*http.Response, []byte, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.st.GatewayURL+path, rd)
	if err != nil {
		return nil, nil, err
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := s.http.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode != want {
		return resp, raw, fmt.Errorf("%s %s: %d, want %d: %.200s", method, path, resp.StatusCode, want, raw)
	}
	return resp, raw, nil
}

func (s *benchStack) setup(ctx context.Context, n int) ([]pair, error) {
	pairs := make([]pair, n)
	for i := range pairs {
		var a, b struct {
			Hash   string `json:"hash"`
			APIKey string `json:"api_key"`
		}
		for _, obj := range []any{&a, &b} {
			_, raw, err := s.do(ctx, "POST", "/api/objects", "", map[string]any{"initial_llm_txt": "# Bench object\n\n" + body}, nil, 201)
			if err != nil {
				return nil, err
			}
			if err := json.Unmarshal(raw, obj); err != nil {
				return nil, err
			}
		}
		_, raw, err := s.do(ctx, "POST", "/api/messages", "", map[string]any{"from_hash": a.Hash, "to_hash": b.Hash, "kind": "note", "body": body}, nil, 201)
		if err != nil {
			return nil, err
		}
		var m struct {
			ThreadID string `json:"thread_id"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, err
		}
		resp, _, err := s.do(ctx, "GET", "/api/objects/"+b.Hash+"/llm.txt", "", nil, nil, 200)
		if err != nil {
			return nil, err
		}
		pairs[i] = pair{from: a.Hash, to: b.Hash, toKey: b.APIKey, thread: m.ThreadID, etag: resp.Header.Get("ETag")}
	}
	return pairs, nil
}

func (s *benchStack) bench(ctx context.Context, o options, out io.Writer) error {
	pairs, err := s.setup(ctx, o.objects)
	if err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	if o.preload > 0 {
		start := time.Now()
		if err := s.preload(ctx, o.preload); err != nil {
			return fmt.Errorf("preload: %w", err)
		}
		fmt.Fprintf(out, "preloaded %d messages in %d threads straight into the store in %s\n",
			o.preload, (o.preload+preloadThread-1)/preloadThread, time.Since(start).Round(time.Second))
	}
	lag, err := newLagWatcher(s.be.Brokers, topicPrefix+events.TopicMailbox)
	if err != nil {
		return err
	}
	lagCtx, stopLag := context.WithCancel(ctx)
	go lag.run(lagCtx)
	defer func() { stopLag(); lag.close() }()

	send := func(thread bool) op {
		return func(ctx context.Context, w, i int) error {
			p := pairs[(w+i*o.workers)%len(pairs)]
			msg := map[string]any{"from_hash": p.from, "to_hash": p.to, "kind": "note", "body": body}
			if thread {
				msg["thread_id"] = p.thread
			}
			rid := fmt.Sprintf("bench-%t-%d-%d", thread, w, i)
			if _, _, err := s.do(ctx, "POST", "/api/messages", "", msg, map[string]string{httpx.HeaderRequestID: rid}, 201); err != nil {
				return err
			}
			lag.acked(rid)
			return nil
		}
	}
	var rs []result
	stopProfile, err := profileStore(o.sendProfile)
	if err != nil {
		return err
	}
	s.cmds.count(true)
	rs = append(rs, s.phase(ctx, "new-thread sends", o.sendPhase, o.workers, true, send(false)))
	rs = append(rs, s.phase(ctx, "replies", o.sendPhase, o.workers, true, send(true)))
	bg0, sendsEnd := s.cmds.background.Load(), time.Now()
	storeShare, err := stopProfile()
	if err != nil {
		return err
	}
	lag50, lag99, lagN := lag.quantiles()
	backlog := lag.backlog()
	drained, left := lag.drain(o.drainLimit)
	all50, all99, allN := lag.quantiles()
	// The background work of the sends is counted until the consumers have caught up with them,
	// so that a consumer that lags is charged all it does for them.
	settled, caughtUp := s.cmds.settle(ctx, o.drainLimit)
	lastWrites := s.cmds.lastWrites(sendsEnd)
	s.cmds.count(false)
	sends := rs[0].Requests + rs[1].Requests
	background := rs[0].Background + rs[1].Background + s.cmds.background.Load() - bg0

	raw := s.mongo.Database(s.prefix + "mailbox_svc").Collection("bench_raw_inserts")
	rs = append(rs, s.phase(ctx, "raw insertOne (same store)", o.phase, o.workers, false, func(ctx context.Context, w, i int) error {
		_, err := raw.InsertOne(ctx, bson.D{{Key: "_id", Value: apikey.NewID("msg")}, {Key: "thread_id", Value: pairs[0].thread},
			{Key: "from_id", Value: "obj_a"}, {Key: "to_id", Value: "obj_b"}, {Key: "kind", Value: "note"},
			{Key: "body", Value: body}, {Key: "created_at", Value: time.Now()}})
		return err
	}))
	read := func(revalidate bool) op {
		return func(ctx context.Context, w, i int) error {
			p := pairs[(w+i*o.workers)%len(pairs)]
			h, want := map[string]string{}, 200
			if revalidate {
				h["If-None-Match"], want = p.etag, 304
			}
			_, _, err := s.do(ctx, "GET", "/api/objects/"+p.to+"/llm.txt", "", nil, h, want)
			return err
		}
	}
	rs = append(rs, s.phase(ctx, "llm.txt read (full)", o.phase, o.workers, true, read(false)))
	rs = append(rs, s.phase(ctx, "llm.txt read (304)", o.phase, o.workers, true, read(true)))
	rs = append(rs, s.phase(ctx, "object read (full)", o.phase, o.workers, true, func(ctx context.Context, w, i int) error {
		_, _, err := s.do(ctx, "GET", "/api/objects/"+pairs[(w+i*o.workers)%len(pairs)].to, "", nil, nil, 200)
		return err
	}))
	rs = append(rs, s.phase(ctx, "owner GET …/keys", o.phase, o.workers, true, func(ctx context.Context, w, i int) error {
		p := pairs[(w+i*o.workers)%len(pairs)]
		_, _, err := s.do(ctx, "GET", "/api/objects/"+p.to+"/keys", p.toKey, nil, nil, 200)
		return err
	}))
	printResults(out, rs)
	fmt.Fprintf(out, "\nsends vs raw insertOne: new-thread %s, replies %s; llm.txt 304 vs full: %.1fx\n",
		ratio(rs[0].rps(), rs[2].rps(), 0), ratio(rs[1].rps(), rs[2].rps(), 0), rs[4].rps()/max(rs[3].rps(), 1))
	storeCPU := func(r result) float64 { c := r.cpuPerRequest(); return storeShare*c.self + c.postgres }
	fmt.Fprintf(out, "the store's CPU alone bounds sends at: new-thread %s, replies %s of raw insertOne: the rate at which a send "+
		"would run if it cost nothing but its store's CPU (%s), the machine's CPU being the limit of both\n",
		ratio(rs[2].cpuPerRequest().total(), storeCPU(rs[0]), 0), ratio(rs[2].cpuPerRequest().total(), storeCPU(rs[1]), 0),
		s.storeCPUIs(storeShare))
	fmt.Fprintf(out, "background store commands (relay, consumers) of the sends, until the consumers caught up: %.1f per send "+
		"(load average %s), by service, command and collection:\n%s",
		float64(background)/float64(max(1, sends)), loadAverage(), s.cmds.breakdown(sends))
	fmt.Fprintf(out, "event lag (2xx → event on Kafka) during the sends: p50 %s, p99 %s (%d events)\n",
		lag50.Round(time.Millisecond), lag99.Round(time.Millisecond), lagN)
	fmt.Fprintf(out, "backlog at the end of the sends: %d events; drained in %s", backlog, drained.Round(time.Millisecond))
	if left > 0 {
		fmt.Fprintf(out, " — NOT drained: %d events still missing after %s", left, o.drainLimit)
	}
	fmt.Fprintf(out, "\nevent lag including the drain: p50 %s, p99 %s (%d events)\n", all50.Round(time.Millisecond), all99.Round(time.Millisecond), allN)

	caught := "NOT caught up"
	if caughtUp {
		caught = "caught up"
	}
	fmt.Fprintf(out, "consumers %s %s after the sends; their last writes after the sends, by service: %s\n", caught, settled.Round(time.Second), lastWrites)
	if _, ok := s.cmds.settle(ctx, o.drainLimit); !ok {
		fmt.Fprintln(out, "consumers NOT quiet after the reads: the idle window below includes their work")
	}
	// The count runs once the consumers are quiet; a store too slow to answer it costs the
	// figure, not the run.
	if docs, err := s.countDocuments(ctx); err != nil {
		fmt.Fprintf(out, "stored documents: not counted (%v)\n", err)
	} else {
		fmt.Fprintf(out, "stored documents: %d\n", docs)
	}
	s.cmds.count(true)
	bg0 = s.cmds.background.Load()
	stopIdleProfile, err := startProfile(o.idleProfile)
	if err != nil {
		return err
	}
	usage := measureIdle(ctx, o.idle, s.be.RedisPID)
	s.cmds.count(false)
	stopIdleProfile()
	fmt.Fprintf(out, "idle CPU over %s after the load: %s\n", o.idle, usage)
	idleSeconds := int(o.idle.Seconds())
	fmt.Fprintf(out, "store commands while idle: %.2f per second: %s\n",
		float64(s.cmds.background.Load()-bg0)/max(1, o.idle.Seconds()), s.cmds.top(max(1, idleSeconds), 8))
	return s.benchStreams(ctx, pairs[0], 100, o.phase, o.streams, out)
}

// phase runs a load phase (runPhase) and measures the CPU the stack used meanwhile.
func (s *benchStack) phase(ctx context.Context, name string, d time.Duration, workers int, counted bool, fn op) result {
	used := cpuWindow(s.be.RedisPID)
	r := runPhase(ctx, name, d, workers, s.cmds, counted, fn)
	r.CPU = used()
	return r
}

// preloadThread is the number of messages of each preloaded thread.
const preloadThread = 100

// preload stores n messages, in threads of preloadThread between objects that exist only there,
// in mailbox-svc's layout (deploy/internal/preload: the messages, the threads and both mailboxes,
// as sends leave them), as a mailbox that has been in use holds them. Their events were published long
// ago: they record none.
func (s *benchStack) preload(ctx context.Context, n int) error {
	db := s.mongo.Database(s.prefix + "mailbox_svc")
	at := time.Now().Add(-30 * 24 * time.Hour)
	const batch = 10 // threads
	var threads []preload.Thread
	for done := 0; done < n; done++ {
		t := done / preloadThread
		a := preload.Participant{ObjectID: fmt.Sprintf("obj_preload%07da", t), Hash: fmt.Sprintf("svc_preload%07da", t)}
		b := preload.Participant{ObjectID: fmt.Sprintf("obj_preload%07db", t), Hash: fmt.Sprintf("svc_preload%07db", t)}
		if done%preloadThread == 0 {
			if len(threads) == batch {
				if err := preload.Threads(ctx, db, threads); err != nil {
					return err
				}
				threads = threads[:0]
			}
			threads = append(threads, preload.Thread{ID: fmt.Sprintf("thr_preload%07d", t), Participants: [2]preload.Participant{a, b}})
		}
		from, to := a.ObjectID, b.ObjectID
		if done%2 == 1 {
			from, to = to, from
		}
		cur := &threads[len(threads)-1]
		cur.Messages = append(cur.Messages, preload.Message{ID: fmt.Sprintf("msg_preload%09d", done), FromID: from, ToID: to,
			Body: body, At: at.Add(time.Duration(done) * time.Second)})
	}
	return preload.Threads(ctx, db, threads)
}

// startProfile starts a CPU profile written to path, if one is asked for; the returned function
// stops it.
func startProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	stop, err := recordProfile(path)
	if err != nil {
		return nil, err
	}
	return func() { _, _ = stop() }, nil
}

// recordProfile starts a CPU profile of the process; the returned function stops it, writes it
// to path if one is given, and returns it.
func recordProfile(path string) (func() ([]byte, error), error) {
	var buf bytes.Buffer
	if err := pprof.StartCPUProfile(&buf); err != nil {
		return nil, err
	}
	return func() ([]byte, error) {
		pprof.StopCPUProfile()
		if path != "" {
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				return nil, err
			}
		}
		return buf.Bytes(), nil
	}, nil
}

// countDocuments counts the documents of every database of the stack from each database's
// statistics (dbStats' objects): one command per database. Counting each collection instead
// made FerretDB read and decode every stored document, for minutes on a loaded store, and the
// work went on after the client gave up, into the idle window measured next. On FerretDB-SQLite
// the figure is SQLite's count of table cells, close to the documents' count.
func (s *benchStack) countDocuments(ctx context.Context) (int64, error) {
	names, err := s.mongo.ListDatabaseNames(ctx, bson.D{})
	if err != nil {
		return 0, err
	}
	var total int64
	for _, db := range names {
		if !strings.HasPrefix(db, s.prefix) {
			continue
		}
		// objects comes back as an int32, an int64 or a whole double: each decodes to an int64.
		var st struct {
			Objects int64 `bson:"objects"`
		}
		if err := s.mongo.Database(db).RunCommand(ctx, bson.D{{Key: "dbStats", Value: 1}}).Decode(&st); err != nil {
			return 0, fmt.Errorf("dbStats of %s: %w", db, err)
		}
		total += st.Objects
	}
	return total, nil
}

// cpuUse is the CPU seconds used over a window by this process (services, gateway, FerretDB,
// kfake and the load generator), the redis-server and PostgreSQL's processes.
type cpuUse struct{ self, redis, postgres float64 }

func (u cpuUse) total() float64 { return u.self + u.redis + u.postgres }

// cpuWindow returns a function that reports the CPU used since cpuWindow was called.
func cpuWindow(redisPID int) func() cpuUse {
	before := cpuTimes(redisPID)
	return func() cpuUse {
		after := cpuTimes(redisPID)
		used := func(k string) float64 {
			sum := 0.0
			for pid, t := range after[k] {
				sum += t - before[k][pid] // a process started meanwhile counts whole; one that ended, not at all
			}
			return sum
		}
		return cpuUse{self: used("self"), redis: used("redis"), postgres: used("postgres")}
	}
}

// measureIdle reports the CPU that this process, the redis-server and PostgreSQL use over d, in
// percent of one core.
func measureIdle(ctx context.Context, d time.Duration, redisPID int) string {
	used := cpuWindow(redisPID)
	start := time.Now()
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
	u, wall := used(), time.Since(start).Seconds()
	return fmt.Sprintf("all-in-one process %.1f %%, redis-server %.1f %%, postgres %.1f %%",
		100*u.self/wall, 100*u.redis/wall, 100*u.postgres/wall)
}

// cpuTimes reads the user+system CPU seconds of this process, the redis-server and every process
// named postgres, by process id, from /proc (zero where it cannot tell).
func cpuTimes(redisPID int) map[string]map[string]float64 {
	out := map[string]map[string]float64{"self": {"self": procCPU("self")}, "redis": {}, "postgres": {}}
	if redisPID > 0 {
		out["redis"]["redis"] = procCPU(strconv.Itoa(redisPID))
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		if comm, err := os.ReadFile(filepath.Join(d, "comm")); err == nil && strings.TrimSpace(string(comm)) == "postgres" {
			out["postgres"][filepath.Base(d)] = procCPU(filepath.Base(d))
		}
	}
	return out
}

// clockTicks is USER_HZ, 100 on every Linux this runs on.
const clockTicks = 100

func procCPU(pid string) float64 {
	raw, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	// Fields after the command (which may hold spaces) start after the last ')'.
	i := bytes.LastIndexByte(raw, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(raw[i+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if errors.Join(err1, err2) != nil {
		return 0
	}
	return (utime + stime) / clockTicks
}

// profileStore starts a CPU profile of the process (written to path, if one is given); the
// returned function stops it and returns the share of the CPU the store took (storeCPUShare).
func profileStore(path string) (func() (float64, error), error) {
	stop, err := recordProfile(path)
	if err != nil {
		return nil, err
	}
	return func() (float64, error) {
		prof, err := stop()
		if err != nil {
			return 0, err
		}
		return storeCPUShare(prof)
	}, nil
}

// storeCPUIs says what the store's CPU is, with the share of the process's CPU that FerretDB
// took in the profile it was read from.
func (s *benchStack) storeCPUIs(share float64) string {
	if s.be.Store == "ferretdb-postgresql" {
		return fmt.Sprintf("FerretDB in this process, %.0f %% of its CPU in the profile, and PostgreSQL", 100*share)
	}
	return fmt.Sprintf("FerretDB and SQLite in this process, %.0f %% of its CPU in the profile", 100*share)
}

// storeCPUShare is the share of the process's CPU that a CPU profile of it spent in the embedded
// store: in samples whose stack holds a function of FerretDB (its connections' goroutines, SQLite
// below them). The garbage collector's own workers and the driver's side of each command are not
// counted, so the share errs low, and the bound it gives errs high.
func storeCPUShare(raw []byte) (float64, error) {
	p, err := profile.Parse(bytes.NewReader(raw))
	if err != nil {
		return 0, fmt.Errorf("read the sends' CPU profile: %w", err)
	}
	cpu := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			cpu = i
		}
	}
	if cpu < 0 {
		return 0, errors.New("the sends' CPU profile has no cpu samples")
	}
	var all, store int64
	for _, s := range p.Sample {
		all += s.Value[cpu]
		if inStore(s) {
			store += s.Value[cpu]
		}
	}
	if all == 0 {
		return 0, nil
	}
	return float64(store) / float64(all), nil
}

// inStore tells a sample taken in the embedded FerretDB.
func inStore(s *profile.Sample) bool {
	for _, loc := range s.Location {
		for _, l := range loc.Line {
			if l.Function != nil && strings.HasPrefix(l.Function.Name, "github.com/FerretDB/FerretDB/") {
				return true
			}
		}
	}
	return false
}
