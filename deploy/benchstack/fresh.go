package main

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/pkg/apikey"
)

// The paths a send takes to its readers, each measured from the send's 201 to the moment the
// reader sees it: listed in the recipient's mailbox (mailbox-svc's lists projection), a node of
// the thread's graph (graph-svc), delivered to the recipient's webhook (webhook-svc), and an
// event on the recipient's open stream (feed-svc's streams).
var freshPaths = []string{"mailbox", "graph node", "webhook", "stream"}

// freshWithin is the p99 each path must keep for a rate to count as fresh.
const freshWithin = time.Second

// freshRecipients is how many recipients the sends are spread over, each with a webhook, an
// open stream and a mailbox poller.
const freshRecipients = 8

// webhookReceiver is a local HTTPS endpoint that records when each message's delivery arrived.
type webhookReceiver struct {
	srv    *httptest.Server
	caFile string
	seen   func(path int, messageID string)
}

func newWebhookReceiver(dir string, seen func(int, string)) (*webhookReceiver, error) {
	r := &webhookReceiver{seen: seen}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var p struct {
			Data struct {
				MessageID string `json:"message_id"`
			} `json:"data"`
		}
		if body, err := io.ReadAll(req.Body); err == nil && json.Unmarshal(body, &p) == nil && p.Data.MessageID != "" {
			r.seen(2, p.Data.MessageID)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	r.caFile = filepath.Join(dir, "webhook-ca.pem")
	if err := os.WriteFile(r.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.srv.Certificate().Raw}), 0o600); err != nil {
		r.srv.Close()
		return nil, err
	}
	return r, nil
}

// freshRun holds, per message sent, when its 201 came and when each path showed it.
type freshRun struct {
	mu          sync.Mutex
	acked       map[string]time.Time    // message id → its 201
	threads     map[string]string       // thread id → message id (every send opens a thread)
	recipientOf map[string]string       // message id → the recipient's hash
	sampled     map[string]string       // message id → thread id, for the graph's reads
	seen        [4]map[string]time.Time // per path: message id → when a reader saw it
}

func newFreshRun() *freshRun {
	r := &freshRun{acked: map[string]time.Time{}, threads: map[string]string{}, recipientOf: map[string]string{},
		sampled: map[string]string{}}
	for i := range r.seen {
		r.seen[i] = map[string]time.Time{}
	}
	return r
}

func (r *freshRun) see(path int, messageID string) {
	now := time.Now()
	r.mu.Lock()
	if _, ok := r.seen[path][messageID]; !ok {
		r.seen[path][messageID] = now
	}
	r.mu.Unlock()
}

// ack records that the send id to recipient to, which opened thread, got its 201 at at; the
// graph of a sampled send's thread is read until its node shows.
func (r *freshRun) ack(id, thread, to string, at time.Time, sample bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acked[id], r.threads[thread], r.recipientOf[id] = at, id, to
	if sample {
		r.sampled[id] = thread
	}
}

// freshStep is one rate's figures.
type freshStep struct {
	offered, achieved float64
	p99               [4]time.Duration
	missing           [4]int
}

// benchFresh ramps the rate of new-thread sends, each rate for o.phase, and prints per rate the
// p99 of each path (a send a reader has not seen 3 s after its rate ends counts as slower than
// anything), until a path's p99 passes a second or the sends themselves fall behind; then the
// highest rate at which all four paths stayed within a second, beside raw insertOne on the
// same store.
func (s *benchStack) benchFresh(ctx context.Context, o options, rcv *webhookReceiver, run *freshRun, out io.Writer) error {
	var senders, hashes []string
	keyOf := map[string]string{} // recipient's hash → its owner key
	for i := range 2 * freshRecipients {
		var obj struct {
			Hash   string `json:"hash"`
			APIKey string `json:"api_key"`
		}
		_, raw, err := s.do(ctx, "POST", "/api/objects", "", map[string]any{}, nil, 201)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &obj); err != nil {
			return err
		}
		if i%2 == 0 {
			senders = append(senders, obj.Hash)
			continue
		}
		hashes, keyOf[obj.Hash] = append(hashes, obj.Hash), obj.APIKey
		if _, _, err := s.do(ctx, "POST", "/api/objects/"+obj.Hash+"/webhooks", obj.APIKey,
			map[string]any{"callback_url": rcv.srv.URL + "/hook", "events": []string{"message"}}, nil, 201); err != nil {
			return fmt.Errorf("webhook: %w", err)
		}
	}
	watch, stopWatching := context.WithCancel(ctx)
	var watchers sync.WaitGroup // the mailbox and graph readers, which end with watch
	defer func() { stopWatching(); watchers.Wait() }()
	for _, to := range hashes {
		conn, body, err := s.openStream(ctx, pair{to: to, toKey: keyOf[to]})
		if err != nil {
			return fmt.Errorf("stream: %w", err)
		}
		defer conn.Close()
		// The stream, and the mailbox read every 50 ms.
		go readEvents(body, func(messageID string) { run.see(3, messageID) })
		watchers.Go(func() {
			for watch.Err() == nil {
				// A page of mailboxPage, newest first: a thread is missed (and its send counted as
				// never seen, which fails its rate) only when more new threads than that reach one
				// recipient between two reads. The reads are the benchmark's own load on the
				// machine it measures, so they read no more than that needs.
				if _, raw, err := s.do(watch, "GET", fmt.Sprintf("/api/objects/%s/mailbox?limit=%d", to, mailboxPage), keyOf[to], nil, nil, 200); err == nil {
					var page struct {
						Threads []struct {
							ID string `json:"id"`
						} `json:"threads"`
					}
					if json.Unmarshal(raw, &page) == nil {
						for _, th := range page.Threads {
							run.mu.Lock()
							id, ok := run.threads[th.ID]
							run.mu.Unlock()
							if ok {
								run.see(0, id)
							}
						}
					}
				}
				sleepCtx(watch, 50*time.Millisecond)
			}
		})
	}
	watchers.Go(func() { // the graphs of sampled threads, until their node shows
		for watch.Err() == nil {
			run.mu.Lock()
			var todo [][2]string
			for id, th := range run.sampled {
				if _, ok := run.seen[1][id]; !ok && time.Since(run.acked[id]) < freshDrain {
					todo = append(todo, [2]string{id, th})
				}
			}
			run.mu.Unlock()
			// Read in parallel (up to graphReaders at once): one read after another, a backlog of
			// sampled sends would add the reads' own time to each send's figure.
			var reads sync.WaitGroup
			slots := make(chan struct{}, graphReaders)
			for _, t := range todo {
				slots <- struct{}{}
				reads.Go(func() {
					defer func() { <-slots }()
					s.checkGraph(watch, run, t[0], t[1], keyOf)
				})
			}
			reads.Wait()
			sleepCtx(watch, 50*time.Millisecond)
		}
	})
	fmt.Fprintf(out, "\nfreshness: new-thread sends spread over %d senders → %d recipients, each rate for %s; p99 from the send's 201 to:\n",
		len(senders), len(hashes), o.phase)
	fmt.Fprintf(out, "%8s %9s %14s %14s %14s %14s\n", "rate/s", "achieved", freshPaths[0], freshPaths[1], freshPaths[2], freshPaths[3])
	stopProfile, err := startProfile(o.sendProfile)
	if err != nil {
		return err
	}
	best := 0
	for _, rate := range []int{5, 10, 20, 40, 80, 120, 160, 200, 240, 320, 480, 640} {
		st := s.freshStep(ctx, run, senders, hashes, rate, o.phase)
		fresh := st.achieved >= 0.9*st.offered
		cells := make([]string, 4)
		for i := range freshPaths {
			cells[i] = st.p99[i].Round(time.Millisecond).String()
			if st.missing[i] > 0 {
				cells[i] = fmt.Sprintf(">%s (%d)", freshWithin, st.missing[i])
			}
			fresh = fresh && st.missing[i] == 0 && st.p99[i] <= freshWithin
		}
		fmt.Fprintf(out, "%8d %9.0f %14s %14s %14s %14s\n", rate, st.achieved, cells[0], cells[1], cells[2], cells[3])
		if !fresh {
			break
		}
		best = rate
	}
	stopProfile()
	b := s.freshBurst(ctx, run, senders, hashes, o.workers, 2*o.phase)
	stopWatching()
	watchers.Wait() // no reader of theirs runs beside the unwatched sends
	// The same sends again, unpaced and unwatched, once the burst's backlog has drained: the
	// highest rate the machine accepts them at, and what of their CPU the store spends.
	if _, ok := s.cmds.settle(ctx, o.drainLimit); !ok {
		fmt.Fprintln(out, "consumers NOT quiet after the burst: the unwatched sends below include their work")
	}
	stopStore, err := profileStore("")
	if err != nil {
		return err
	}
	alone := s.phase(ctx, "new-thread sends, unwatched", o.phase, o.workers, false, func(ctx context.Context, w, i int) error {
		from, to := senders[i%len(senders)], hashes[(w+i)%len(hashes)]
		_, _, err := s.do(ctx, "POST", "/api/messages", "", map[string]any{"from_hash": from, "to_hash": to, "kind": "note", "body": "fresh"}, nil, 201)
		return err
	})
	share, err := stopStore()
	if err != nil {
		return err
	}
	raw := s.mongo.Database(s.prefix + "mailbox_svc").Collection("bench_raw_inserts")
	r := s.phase(ctx, "raw insertOne (same store)", o.phase, o.workers, false, func(ctx context.Context, w, i int) error {
		_, err := raw.InsertOne(ctx, bson.D{{Key: "_id", Value: apikey.NewID("msg")}, {Key: "from_id", Value: "obj_a"},
			{Key: "to_id", Value: "obj_b"}, {Key: "kind", Value: "note"}, {Key: "body", Value: body}, {Key: "created_at", Value: time.Now()}})
		return err
	})
	fmt.Fprintf(out, "highest rate with every path within %s p99: %d sends/s; raw insertOne on the same store: %.0f/s (%d clients); ratio %s\n",
		freshWithin, best, r.rps(), o.workers, ratio(float64(best), r.rps(), 1))
	c := alone.cpuPerRequest()
	fmt.Fprintf(out, "the same sends unpaced and unwatched (%d clients, %s): %.0f/s (%s of raw insertOne), %d failed; "+
		"the store's CPU alone bounds them at %s of raw insertOne (%s): no freshness-bounded rate can pass either\n",
		o.workers, o.phase, alone.rps(), ratio(alone.rps(), r.rps(), 1), alone.Errors,
		ratio(r.cpuPerRequest().total(), share*c.self+c.postgres, 1), s.storeCPUIs(share))
	b.print(out, o.workers, 2*o.phase)
	return nil
}

// freshDrain is how long after its 201 a send may still show on a path before it counts as
// lost: the overload burst's backlog takes a while to drain.
const freshDrain = 30 * time.Second

// burstFigures is the overload burst's result.
type burstFigures struct {
	freshStep
	attempts, accepted, refused, failed int
	firstFailure                        string
}

// freshBurst runs workers senders of new-thread messages with no pacing for d, each waiting only
// the Retry-After of a 503 as a client should, through the front door (LAG_LIMIT); then it waits
// until every accepted send has shown on every path, or freshDrain has passed, and returns the
// share of 503s and the freshness of what was accepted.
func (s *benchStack) freshBurst(ctx context.Context, run *freshRun, senders, recipients []string, workers int, d time.Duration) burstFigures {
	var b burstFigures
	var mine []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	end := start.Add(d)
	for w := range workers {
		wg.Go(func() {
			for i := w; time.Now().Before(end) && ctx.Err() == nil; i += workers {
				from, to := senders[i%len(senders)], recipients[(i/len(senders))%len(recipients)]
				resp, raw, err := s.do(ctx, "POST", "/api/messages", "", map[string]any{"from_hash": from, "to_hash": to, "kind": "note", "body": "burst"}, nil, 201)
				at := time.Now()
				var m struct {
					ID       string `json:"id"`
					ThreadID string `json:"thread_id"`
				}
				mu.Lock()
				b.attempts++
				switch {
				case err == nil && json.Unmarshal(raw, &m) == nil:
					b.accepted++
					mine = append(mine, m.ID)
				case resp != nil && resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "":
					b.refused++
				default:
					b.failed++
					if b.firstFailure == "" {
						b.firstFailure = fmt.Sprint(err)
					}
				}
				mu.Unlock()
				if m.ID != "" {
					run.ack(m.ID, m.ThreadID, to, at, i%graphSample == 0)
				} else if resp != nil && resp.StatusCode == http.StatusServiceUnavailable {
					secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
					sleepCtx(ctx, time.Duration(max(secs, 1))*time.Second)
				}
			}
		})
	}
	wg.Wait()
	b.offered, b.achieved = float64(b.attempts)/d.Seconds(), float64(b.accepted)/time.Since(start).Seconds()
	for deadline := time.Now().Add(freshDrain); time.Now().Before(deadline) && ctx.Err() == nil; sleepCtx(ctx, 200*time.Millisecond) {
		if run.unseen(mine) == 0 {
			break
		}
	}
	b.freshStep = run.figures(mine, b.offered, b.achieved)
	return b
}

// print writes the overload burst's figures.
func (b burstFigures) print(out io.Writer, workers int, d time.Duration) {
	fmt.Fprintf(out, "\noverload burst: %d senders for %s with no pacing (a 503's Retry-After waited), LAG_LIMIT 2s: %d sends, "+
		"%d accepted (%.0f/s), %d refused with 503 and Retry-After (%s), %d failed otherwise\n",
		workers, d, b.attempts, b.accepted, b.achieved, b.refused, ratio(float64(b.refused), float64(b.attempts), 0), b.failed)
	if b.firstFailure != "" {
		fmt.Fprintf(out, "  first failure: %s\n", b.firstFailure)
	}
	fmt.Fprintf(out, "  accepted sends, p99 from the 201 to:")
	for i, p := range freshPaths {
		fmt.Fprintf(out, " %s %s;", p, b.p99[i].Round(time.Millisecond))
	}
	fmt.Fprintf(out, "\n  accepted sends not seen %s after their 201 (lost, or later than that):", freshDrain)
	for i, p := range freshPaths {
		fmt.Fprintf(out, " %s %d;", p, b.missing[i])
	}
	fmt.Fprintln(out)
}

// unseen counts the paths on which the sends ids have not shown yet.
func (r *freshRun) unseen(ids []string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for path := range freshPaths {
		_, missing := r.latencies(path, ids)
		n += missing
	}
	return n
}

// figures returns the p99 of each path over the sends ids (a send not seen counts as missing).
func (r *freshRun) figures(ids []string, offered, achieved float64) freshStep {
	st := freshStep{offered: offered, achieved: achieved}
	r.mu.Lock()
	defer r.mu.Unlock()
	for path := range freshPaths {
		var lat []time.Duration
		lat, st.missing[path] = r.latencies(path, ids)
		slices.Sort(lat)
		st.p99[path] = quantile(lat, 0.99)
	}
	return st
}

// latencies returns, for the sends ids on path, the time from each 201 to its showing and how
// many have not shown; only the sampled sends count on the graph's path. The caller holds r.mu.
func (r *freshRun) latencies(path int, ids []string) (lat []time.Duration, missing int) {
	for _, id := range ids {
		if _, sampled := r.sampled[id]; path == 1 && !sampled {
			continue
		}
		if seen, ok := r.seen[path][id]; ok {
			lat = append(lat, max(0, seen.Sub(r.acked[id])))
		} else {
			missing++
		}
	}
	return lat, missing
}

// checkGraph reads a sampled message's thread graph and records its node once it shows.
func (s *benchStack) checkGraph(ctx context.Context, run *freshRun, messageID, threadID string, keyOf map[string]string) {
	run.mu.Lock()
	to := run.recipientOf[messageID]
	run.mu.Unlock()
	_, raw, err := s.do(ctx, "GET", "/api/threads/"+threadID+"/graph", keyOf[to], nil, nil, 200)
	if err != nil {
		return
	}
	var g struct {
		Nodes []struct {
			MessageID *string `json:"message_id"`
		} `json:"nodes"`
	}
	if json.Unmarshal(raw, &g) != nil {
		return
	}
	for _, n := range g.Nodes {
		if n.MessageID != nil && *n.MessageID == messageID {
			run.see(1, messageID)
		}
	}
}

// mailboxPage is the page of threads each recipient's watcher reads every 50 ms: at 640 sends/s
// (the ramp's top) 80 new threads a second reach each recipient, 20 in a quarter of a second.
const mailboxPage = 20

// graphReaders is how many sampled threads' graphs are read at once.
const graphReaders = 8

// graphSample is one send in graphSample whose thread graph is read until its node shows: reading
// every send's graph would load graph-svc more than the sends do.
const graphSample = 4

// freshStep sends new-thread messages at rate for d, then waits up to 3 s for the readers, and
// returns the p99 of each path over the step's sends (a send not seen counts as missing).
func (s *benchStack) freshStep(ctx context.Context, run *freshRun, senders, recipients []string, rate int, d time.Duration) freshStep {
	var mine []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	start, sent := time.Now(), 0
	for end := start.Add(d); time.Now().Before(end); sent++ {
		<-tick.C
		from, to := senders[sent%len(senders)], recipients[(sent/len(senders))%len(recipients)]
		sample := sent%graphSample == 0
		wg.Go(func() {
			_, raw, err := s.do(ctx, "POST", "/api/messages", "", map[string]any{"from_hash": from, "to_hash": to, "kind": "note", "body": "fresh"}, nil, 201)
			at := time.Now()
			var m struct {
				ID       string `json:"id"`
				ThreadID string `json:"thread_id"`
			}
			if err != nil || json.Unmarshal(raw, &m) != nil {
				return
			}
			run.ack(m.ID, m.ThreadID, to, at, sample)
			mu.Lock()
			mine = append(mine, m.ID)
			mu.Unlock()
		})
	}
	wg.Wait()
	achieved := float64(len(mine)) / time.Since(start).Seconds()
	sleepCtx(ctx, 3*time.Second)
	return run.figures(mine, float64(rate), achieved)
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
