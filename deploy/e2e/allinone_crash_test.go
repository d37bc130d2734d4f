package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/svcdev/svc/pkg/authn"
)

// The all-in-one as a user runs it: its own binary, embedded FerretDB, kfake and miniredis on a
// fresh SVC_DATA_DIR, killed with SIGKILL under load. Every acknowledged message must be in its
// thread, have its graph node, be counted by the feed and reach the webhook receiver.

var allinoneBinary = struct {
	once sync.Once
	path string
	err  error
}{}

// buildAllinone builds deploy/allinone once per test binary.
func buildAllinone(t *testing.T) string {
	t.Helper()
	allinoneBinary.once.Do(func() {
		dir, err := os.MkdirTemp("", "svc-allinone-")
		if err != nil {
			allinoneBinary.err = err
			return
		}
		allinoneBinary.path = filepath.Join(dir, "allinone")
		out, err := exec.Command("go", "build", "-o", allinoneBinary.path, "../allinone").CombinedOutput()
		if err != nil {
			allinoneBinary.err = fmt.Errorf("go build ../allinone: %v\n%s", err, out)
		}
	})
	if allinoneBinary.err != nil {
		t.Fatal(allinoneBinary.err)
	}
	return allinoneBinary.path
}

// allinone is one run of the all-in-one binary.
type allinone struct {
	cmd *exec.Cmd
	log *syncBuffer
}

// startAllinone runs the binary on dataDir with the gateway on addr and waits for its /readyz.
// extra settings (KEY=value) come last, so they win over the others.
func startAllinone(t *testing.T, bin, dataDir, addr, caFile string, log *syncBuffer, extra ...string) *allinone {
	t.Helper()
	cmd := allinoneCommand(bin, dataDir, addr, caFile, extra...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := &allinone{cmd: cmd, log: log}
	t.Cleanup(func() { a.kill() })
	// The gateway's port is bound before the backends start, and a request waits there until the
	// gateway serves: each try has its own timeout, so that a start that hangs fails the deadline.
	client := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(90 * time.Second)
	for {
		res, err := client.Get("http://" + addr + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return a
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the all-in-one did not get ready: %v\n%s", err, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// allinoneCommand is the command that runs the binary on dataDir with the gateway on addr, with
// the test suites' generous settings and then extra ones (KEY=value).
func allinoneCommand(bin, dataDir, addr, caFile string, extra ...string) *exec.Cmd {
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "SVC_ADDR="+addr, "SVC_DATA_DIR="+dataDir, "SVC_OUTBOUND_ALLOW_PRIVATE=true",
		"SVC_OUTBOUND_CA_FILE="+caFile, "SVC_LOG_LEVEL=info", "WEBHOOK_RETRY_SCHEDULE=300ms,300ms,300ms",
		"WEBHOOK_RETRY_JITTER=0", "WEBHOOK_TIMEOUT=2s", "WEBHOOK_CLAIM_LEASE=3s", "WEBHOOK_POLL_INTERVAL=200ms",
		"OUTBOX_RECOVER_AFTER=2s", "OUTBOX_SWEEP_INTERVAL=500ms")
	for k, v := range generous {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, extra...)
	return cmd
}

func (a *allinone) kill() {
	_ = a.cmd.Process.Signal(syscall.SIGKILL)
	_ = a.cmd.Wait()
}

func (a *allinone) stop(t *testing.T) {
	t.Helper()
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	if err := a.cmd.Wait(); err != nil {
		t.Fatalf("the all-in-one did not stop in order: %v", err)
	}
}

// freeAddr returns a loopback address no one listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// sent is one acknowledged message.
type sent struct{ id, thread, to, toKey string }

// crashLoad sends messages from one sender to the recipients at about perSecond, keeping those
// the gateway acknowledged (201); sends that fail while the all-in-one is down are not.
type crashLoad struct {
	url        string
	sender     string
	recipients [][3]string // hash, key, thread
	mu         sync.Mutex
	acked      []sent
	refused    int
	stop       chan struct{}
	done       chan struct{}
}

func startLoad(url, sender string, recipients [][3]string, perSecond int) *crashLoad {
	l := &crashLoad{url: url, sender: sender, recipients: recipients, stop: make(chan struct{}), done: make(chan struct{})}
	client := &http.Client{Timeout: 10 * time.Second}
	go func() {
		defer close(l.done)
		tick := time.NewTicker(time.Second / time.Duration(perSecond))
		defer tick.Stop()
		var wg sync.WaitGroup
		defer wg.Wait()
		for i := 0; ; i++ {
			select {
			case <-l.stop:
				return
			case <-tick.C:
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				l.send(client, i)
			}()
		}
	}()
	return l
}

func (l *crashLoad) send(client *http.Client, i int) {
	to := l.recipients[i%len(l.recipients)]
	body, _ := json.Marshal(map[string]any{"from_hash": l.sender, "to_hash": to[0], "thread_id": to[2], "kind": "note",
		"body": fmt.Sprintf("load %d", i)})
	res, err := client.Post(l.url+"/api/messages", "application/json", bytes.NewReader(body))
	if err != nil {
		l.mu.Lock()
		l.refused++
		l.mu.Unlock()
		return
	}
	defer res.Body.Close()
	var m struct {
		ID       string `json:"id"`
		ThreadID string `json:"thread_id"`
	}
	if res.StatusCode != http.StatusCreated || json.NewDecoder(res.Body).Decode(&m) != nil {
		l.mu.Lock()
		l.refused++
		l.mu.Unlock()
		return
	}
	l.mu.Lock()
	l.acked = append(l.acked, sent{id: m.ID, thread: m.ThreadID, to: to[0], toKey: to[1]})
	l.mu.Unlock()
}

func (l *crashLoad) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

func (l *crashLoad) finish() ([]sent, int) {
	close(l.stop)
	<-l.done
	return l.acked, l.refused
}

// crashEnv is an Env on the all-in-one at addr.
func crashEnv(t *testing.T, addr string, log *syncBuffer) *Env {
	e := &Env{URL: "http://" + addr, GatewayJWTKey: authn.GenerateSeed(), ServiceJWTKey: authn.GenerateSeed(),
		logs: log, client: &http.Client{Timeout: 30 * time.Second}}
	e.spec = loadSpec(t, e)
	return e
}

// crashSetup creates a sender and recipients, each with a webhook of its messages to rcv and a
// thread with the sender, which the load's messages go to (so that a few reads check them all).
func crashSetup(t *testing.T, e *Env, rcv *receiver) (string, [][3]string) {
	t.Helper()
	sender, _ := e.CreateObject(t, nil)
	var recipients [][3]string
	for i := range 4 {
		hash, key := e.CreateObject(t, nil)
		createWebhook(t, e, hash, key, map[string]any{"callback_url": rcv.URL(fmt.Sprintf("/o%d", i)), "events": []string{"message"}})
		thread := Str(t, sendMessage(t, e, sender, hash, "", "opening"), "thread_id")
		recipients = append(recipients, [3]string{hash, key, thread})
	}
	return sender, recipients
}

// verifyAcked waits until every acknowledged message is in its thread, has its graph node, is
// counted by the feed and reached the receiver, and returns how long all of that took and the
// number of duplicate deliveries (deduped by webhook-id). It fails after a minute.
func verifyAcked(t *testing.T, e *Env, rcv *receiver, acked []sent) (time.Duration, int) {
	t.Helper()
	return verifyAckedWithin(t, e, rcv, acked, time.Minute)
}

// verifyAckedWithin is verifyAcked failing after within.
func verifyAckedWithin(t *testing.T, e *Env, rcv *receiver, acked []sent, within time.Duration) (time.Duration, int) {
	t.Helper()
	start := time.Now()
	deadline := start.Add(within)
	var missing []string
	for {
		delivered := map[string]bool{}
		ids := map[string]int{}
		for _, r := range rcv.Got() {
			if r.Payload.Type == "message" {
				delivered[fmt.Sprint(r.Payload.Data["message_id"])] = true
			}
			ids[r.Header.Get("webhook-id")]++
		}
		missing = missing[:0]
		for _, m := range acked {
			if !delivered[m.id] {
				missing = append(missing, m.id)
			}
		}
		if len(missing) == 0 {
			dups := 0
			for _, n := range ids {
				dups += n - 1
			}
			t.Logf("every acknowledged message reached the receiver %.1fs after the load", time.Since(start).Seconds())
			checkProjections(t, e, acked, deadline)
			return time.Since(start), dups
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d acknowledged messages never reached the webhook receiver (first: %v)\nlog:\n%s",
				len(missing), len(acked), missing[:min(5, len(missing))], e.problems(60))
		}
		if time.Since(start) > 10*time.Second && time.Since(start)%(5*time.Second) < 200*time.Millisecond {
			t.Logf("%d of %d acknowledged messages not delivered yet", len(missing), len(acked))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkProjections checks each acknowledged message in its thread and its graph, and the feed's
// message count.
func checkProjections(t *testing.T, e *Env, acked []sent, deadline time.Time) {
	t.Helper()
	byThread := map[string][]sent{}
	for _, m := range acked {
		byThread[m.thread] = append(byThread[m.thread], m)
	}
	for thread, msgs := range byThread {
		key := msgs[0].toKey
		// A message whose send raced another to the same thread is in the thread once the
		// projection has seen it (docs/api.md), so the thread is read until the deadline too.
		for {
			inThread := map[string]bool{}
			for cursor := ""; ; {
				page := e.Do(t, "GET", "/api/threads/"+thread+"?limit=200"+cursor, key, nil).Expect(t, http.StatusOK).JSON(t)
				for _, m := range messagesOf(page) {
					inThread[m["id"].(string)] = true
				}
				next, _ := page["next_cursor"].(string)
				if next == "" {
					break
				}
				cursor = "&cursor=" + next
			}
			var missing []string
			for _, m := range msgs {
				if !inThread[m.id] {
					missing = append(missing, m.id)
				}
			}
			if len(missing) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d messages are not in their thread %s (first: %s)", len(missing), thread, missing[0])
			}
			time.Sleep(200 * time.Millisecond)
		}
		for {
			nodes := allGraphNodes(t, e, key, thread)
			var missing []string
			for _, m := range msgs {
				if byID(nodes, "nod_"+m.id) == nil {
					missing = append(missing, m.id)
				}
			}
			if len(missing) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d messages of thread %s have no graph node (first: %s)", len(missing), thread, missing[0])
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	for {
		n := stats(t, e)["message_count"].(float64)
		if int(n) >= len(acked) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the feed counts %v messages, %d were acknowledged", n, len(acked))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestAllinoneSurvivesSIGKILL runs the all-in-one binary on a fresh data directory, kills it
// with SIGKILL under load, restarts it on the same directory, keeps sending, and finds every
// acknowledged message in its thread, its graph, the feed's count and the webhook receiver.
// Three runs, each printed.
func TestAllinoneSurvivesSIGKILL(t *testing.T) {
	bin := buildAllinone(t)
	for run := 1; run <= 3; run++ {
		t.Run(fmt.Sprintf("run%d", run), func(t *testing.T) {
			rcv := newReceiver(t)
			dataDir, addr, log := t.TempDir(), freeAddr(t), &syncBuffer{}
			first := startAllinone(t, bin, dataDir, addr, rcv.CAFile, log)
			e := crashEnv(t, addr, log)
			sender, recipients := crashSetup(t, e, rcv)
			load := startLoad(e.URL, sender, recipients, 40)
			for load.count() < 80 {
				time.Sleep(20 * time.Millisecond)
			}
			first.kill()
			before := load.count()
			startAllinone(t, bin, dataDir, addr, rcv.CAFile, log)
			after := load.count()
			for load.count() < after+80 {
				time.Sleep(20 * time.Millisecond)
			}
			acked, refused := load.finish()
			took, dups := verifyAcked(t, e, rcv, acked)
			t.Logf("run %d: %d acknowledged (%d before the SIGKILL, %d after the restart), %d refused while down; "+
				"all in thread, graph, feed count and webhook %.1fs after the load; %d duplicate deliveries",
				run, len(acked), before, len(acked)-after, refused, took.Seconds(), dups)
			if !strings.Contains(log.String(), "did not stop in order") {
				t.Errorf("the restart did not report the unclean stop")
			}
		})
	}
}

// TestAllinoneBrokerDirectoryLost kills the all-in-one right after sends (their events published
// but not all consumed), deletes its broker directory, restarts it: start-up reports the loss,
// the services publish their retained events again, and every acknowledged message arrives.
// A second stop cuts a segment file in the middle: start-up reports the repair, and again every
// acknowledged message arrives.
func TestAllinoneBrokerDirectoryLost(t *testing.T) {
	bin := buildAllinone(t)
	rcv := newReceiver(t)
	dataDir, addr, log := t.TempDir(), freeAddr(t), &syncBuffer{}
	a := startAllinone(t, bin, dataDir, addr, rcv.CAFile, log)
	e := crashEnv(t, addr, log)
	sender, recipients := crashSetup(t, e, rcv)
	load := startLoad(e.URL, sender, recipients, 40)
	for load.count() < 40 {
		time.Sleep(20 * time.Millisecond)
	}
	a.kill()
	if err := os.RemoveAll(filepath.Join(dataDir, "kafka")); err != nil {
		t.Fatal(err)
	}
	a = startAllinone(t, bin, dataDir, addr, rcv.CAFile, log)
	for n := load.count(); load.count() < n+30; {
		time.Sleep(20 * time.Millisecond)
	}
	acked, _ := load.finish()
	if !strings.Contains(log.String(), "embedded Kafka lost events") {
		t.Fatalf("start-up did not report the lost broker directory:\n%s", log.String())
	}
	took, dups := verifyAcked(t, e, rcv, acked)
	t.Logf("deleted broker directory: %d acknowledged, all delivered %.1fs after the load, %d duplicate deliveries", len(acked), took.Seconds(), dups)

	a.stop(t)
	cutSegments(t, filepath.Join(dataDir, "kafka", "partitions"))
	log = &syncBuffer{}
	e.logs = log
	startAllinone(t, bin, dataDir, addr, rcv.CAFile, log)
	load = startLoad(e.URL, sender, recipients, 40)
	for load.count() < 30 {
		time.Sleep(20 * time.Millisecond)
	}
	more, _ := load.finish()
	if !strings.Contains(log.String(), "embedded Kafka lost events") || !strings.Contains(log.String(), "repaired") {
		t.Fatalf("start-up did not report the cut broker log:\n%s", log.String())
	}
	took, dups = verifyAcked(t, e, rcv, append(acked, more...))
	t.Logf("cut segment files: %d more acknowledged, all delivered %.1fs after the load, %d duplicate deliveries", len(more), took.Seconds(), dups)
}

// cutSegments overwrites the second half of every non-empty segment file with garbage.
func cutSegments(t *testing.T, dir string) {
	t.Helper()
	cut := 0
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || !strings.HasSuffix(path, ".dat") || info.Size() < 64 {
			return err
		}
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		cut++
		_, err = f.WriteAt(bytes.Repeat([]byte{0xff}, int(info.Size()-info.Size()/2)), info.Size()/2)
		return err
	})
	if err != nil || cut == 0 {
		t.Fatalf("cutting segment files: %v (%d cut)", err, cut)
	}
}

// allGraphNodes reads every page of a thread's graph.
func allGraphNodes(t *testing.T, e *Env, key, thread string) []map[string]any {
	t.Helper()
	var nodes []map[string]any
	for cursor := ""; ; {
		g := e.Do(t, "GET", "/api/threads/"+thread+"/graph?limit=200"+cursor, key, nil).Expect(t, http.StatusOK).JSON(t)
		for _, n := range g["nodes"].([]any) {
			nodes = append(nodes, n.(map[string]any))
		}
		next, _ := g["next_cursor"].(string)
		if next == "" {
			return nodes
		}
		cursor = "&cursor=" + next
	}
}
