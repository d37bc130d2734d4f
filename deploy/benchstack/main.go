// Command benchstack starts the all-in-one stack on a chosen backend, loads it through the gateway
// on loopback with bounded loops, and prints side by side: new-thread sends, replies, raw
// insertOne on the same store, public reads (full and 304), an owner read — each with rps, p50,
// p99 and store commands per request — then the event lag of the sends, how long their backlog
// takes to drain, the idle CPU after the load and the number of stored documents; last, event →
// stream latency at 100 messages/s and the memory per open event stream.
//
//	go run ./deploy/benchstack                        # FerretDB on SQLite, miniredis: nothing to install
//	go run ./deploy/benchstack -postgresql-url postgres://127.0.0.1/ferretdb   # + redis-server when on PATH
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

type options struct {
	pgURL       string
	redis       string
	phase       time.Duration
	sendPhase   time.Duration
	workers     int
	objects     int
	idle        time.Duration
	drainLimit  time.Duration
	keepDataDir bool
	preload     int
	idleProfile string
	sendProfile string
	streams     int
	fresh       bool
}

func main() {
	var o options
	flag.StringVar(&o.pgURL, "postgresql-url", os.Getenv("SVC_FERRETDB_POSTGRESQL_URL"),
		"back FerretDB with this PostgreSQL database (default $SVC_FERRETDB_POSTGRESQL_URL; empty: SQLite)")
	flag.StringVar(&o.redis, "redis", "auto", `"auto" (redis-server when on PATH), "server" or "embedded" (miniredis)`)
	flag.DurationVar(&o.phase, "phase", 10*time.Second, "duration of each read and insert phase")
	flag.DurationVar(&o.sendPhase, "send-phase", 20*time.Second, "duration of each send phase (new threads, replies)")
	flag.IntVar(&o.workers, "c", 16, "concurrent clients")
	flag.IntVar(&o.objects, "objects", 32, "sender/recipient pairs")
	flag.DurationVar(&o.idle, "idle", 60*time.Second, "idle window after the load, for CPU use")
	flag.IntVar(&o.streams, "streams", 1000, "event streams held open to measure the memory each holds")
	flag.IntVar(&o.preload, "preload", 0, "messages inserted straight into the store before the load (threads of 100), so that the\n"+
		"load and the idle window run over stored data")
	flag.DurationVar(&o.drainLimit, "drain-limit", 5*time.Minute, "longest wait for the event backlog to drain")
	flag.StringVar(&o.sendProfile, "send-profile", "", "write a CPU profile of the send phases (with -fresh: of the rate ramp) to this file (go tool pprof)")
	flag.StringVar(&o.idleProfile, "idle-profile", "", "write a CPU profile of the idle window to this file (go tool pprof)")
	flag.BoolVar(&o.fresh, "fresh", false, "instead of the phases, ramp the send rate and print how long a send takes to show in the\n"+
		"recipient's mailbox, graph, webhook and stream (make bench-fresh)")
	flag.BoolVar(&o.keepDataDir, "keep", false, "keep the data: the SQLite directory, the PostgreSQL databases")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "benchstack:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, out io.Writer) error {
	redisServer := ""
	switch o.redis {
	case "auto", "server":
		if p, err := exec.LookPath("redis-server"); err == nil {
			redisServer = p
		} else if o.redis == "server" {
			return fmt.Errorf("-redis server: redis-server is not on PATH (apt-get install redis-server)")
		}
	case "embedded":
	default:
		return fmt.Errorf("-redis must be auto, server or embedded, not %q", o.redis)
	}
	dir, err := os.MkdirTemp("", "benchstack-")
	if err != nil {
		return err
	}
	if !o.keepDataDir {
		defer os.RemoveAll(dir)
	}
	be, err := startBackends(ctx, dir, o.pgURL, redisServer)
	if err != nil {
		return err
	}
	defer be.stop()
	cmds := &commands{}
	env := map[string]string{}
	var run *freshRun
	var rcv *webhookReceiver
	if o.fresh {
		run = newFreshRun()
		if rcv, err = newWebhookReceiver(dir, run.see); err != nil {
			return err
		}
		defer rcv.srv.Close()
		// webhook-svc delivers to the local receiver: loopback, under its own CA.
		env["OUTBOUND_ALLOW_PRIVATE"], env["OUTBOUND_CA_FILE"] = "true", rcv.caFile
		// The front door as deployed: writes are refused while a projection is more than 2 s
		// behind, which the overload burst measures (its share of 503s).
		env["LAG_LIMIT"] = "2s"
	}
	s, err := startStack(ctx, be, cmds, env)
	if err != nil {
		return err
	}
	defer s.close(o.keepDataDir)
	fmt.Fprintf(out, "benchstack: %s + %s + kfake, %d clients, %d object pairs, loopback; load average before: %s\n",
		be.Store, be.Cache, o.workers, o.objects, loadAverage())
	if o.fresh {
		return s.benchFresh(ctx, o, rcv, run, out)
	}
	return s.bench(ctx, o, out)
}

// printResults writes the phases side by side. CPU is per request, in milliseconds: the
// all-in-one process (with the load generator), PostgreSQL and redis-server.
func printResults(out io.Writer, rs []result) {
	fmt.Fprintf(out, "\n%-26s %9s %7s %9s %9s %9s %6s %20s\n", "phase", "requests", "rps", "p50", "p99", "cmds/req", "errors", "CPU ms/req: svc pg redis")
	for _, r := range rs {
		c := r.cpuPerRequest()
		fmt.Fprintf(out, "%-26s %9d %7.0f %9s %9s %9s %6d %9.2f %5.2f %5.2f\n", r.Name, r.Requests, r.rps(),
			quantile(r.Latencies, 0.50).Round(10*time.Microsecond), quantile(r.Latencies, 0.99).Round(10*time.Microsecond), r.perRequest(), r.Errors,
			1000*c.self, 1000*c.postgres, 1000*c.redis)
	}
	for _, r := range rs {
		if r.FirstError != "" {
			fmt.Fprintf(out, "  %s: first error: %s\n", r.Name, r.FirstError)
		}
	}
}

// ratio is a in percent of b with decimals decimals (the freshness-bounded rate can be well
// under 1 % of raw inserts: it takes one), "-" without a base.
func ratio(a, b float64, decimals int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.*f %%", decimals, 100*a/b)
}

// loadAverage is the machine's 1-minute load average, to read the figures by: other work on the
// machine slows every phase.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Fields(string(raw))[0]
}
