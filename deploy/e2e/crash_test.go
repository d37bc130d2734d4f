package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/svcdev/svc/deploy/stack"
	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/testkit"
)

// childEnv carries, as JSON, the options of a suite that this test binary runs as a separate
// process, so that a test can kill it.
const childEnv = "SVC_E2E_CHILD"

// childOptions are what a child suite needs to know of the parent's backends.
type childOptions struct {
	MongoURI, RedisURL, DatabasePrefix, TopicPrefix string
	GatewayJWTKey, ServiceJWTKey                    string
	Brokers                                         []string
	Env                                             map[string]string
}

// runChild runs a suite until SIGTERM and prints its gateway URL on stdout. It never returns.
func runChild(raw string) {
	var o childOptions
	if err := json.Unmarshal([]byte(raw), &o); err != nil {
		fmt.Fprintln(os.Stderr, "child options:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	s, err := stack.Start(ctx, stack.Options{
		MongoURI: o.MongoURI, Brokers: o.Brokers, RedisURL: o.RedisURL, DatabasePrefix: o.DatabasePrefix,
		TopicPrefix: o.TopicPrefix, GatewayJWTKey: o.GatewayJWTKey, ServiceJWTKey: o.ServiceJWTKey, Env: o.Env,
		Log: slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start the suite:", err)
		os.Exit(1)
	}
	fmt.Println(s.GatewayURL)
	<-ctx.Done()
	if err := s.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stop the suite:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// child is a suite running in a process of its own.
type child struct {
	cmd    *exec.Cmd
	url    string
	stderr *syncBuffer
}

func startChild(t *testing.T, o childOptions) *child {
	t.Helper()
	raw, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: exec.Command(os.Args[0], "-test.run=^$"), stderr: &syncBuffer{}}
	c.cmd.Env = append(os.Environ(), childEnv+"="+string(raw))
	c.cmd.Stderr = c.stderr
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
		if t.Failed() {
			t.Logf("child suite's log:\n%s", c.stderr.String())
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the child suite did not start: %v\n%s", err, c.stderr.String())
	}
	c.url = strings.TrimSpace(line)
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return c
}

// TestAcknowledgedWritesSurviveAKill writes through a suite whose Kafka does not answer, kills
// its process with SIGKILL right after the last 2xx (every event still unpublished), starts the
// suite again, and finds the event of every acknowledged write on Kafka.
func TestAcknowledgedWritesSurviveAKill(t *testing.T) {
	t.Parallel()
	be := testkit.Backends(t)
	env := map[string]string{"OUTBOX_RECOVER_AFTER": "1s", "OUTBOX_SWEEP_INTERVAL": "200ms"}
	for k, v := range generous {
		env[k] = v
	}
	opts := childOptions{
		MongoURI: be.MongoURI, RedisURL: be.RedisURL, DatabasePrefix: be.Name + "_", TopicPrefix: be.Name + ".",
		GatewayJWTKey: authn.GenerateSeed(), ServiceJWTKey: authn.GenerateSeed(), Brokers: []string{testkit.Silent(t)}, Env: env,
	}
	t.Cleanup(func() { dropDatabases(be.MongoURI, be.Name+"_") })
	first := startChild(t, opts)
	e := &Env{URL: first.url, GatewayJWTKey: opts.GatewayJWTKey, ServiceJWTKey: opts.ServiceJWTKey, Name: be.Name, Brokers: be.Brokers, RedisURL: be.RedisURL,
		logs: &syncBuffer{}, client: &http.Client{Timeout: 30 * time.Second}}
	e.spec = loadSpec(t, e)

	alice, _ := e.CreateObject(t, nil)
	bob, bobKey := e.CreateObject(t, map[string]any{"initial_llm_txt": "# Bob"})
	var messages []string
	thread := ""
	for i := range 4 {
		m := sendMessage(t, e, alice, bob, thread, fmt.Sprintf("message %d", i))
		messages, thread = append(messages, Str(t, m, "id")), Str(t, m, "thread_id")
	}
	e.Do(t, "PUT", "/api/objects/"+bob+"/llm.txt", bobKey, map[string]any{"body": "# Bob\n\nSecond version."}).Expect(t, 200)
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = first.cmd.Wait()

	// 2 object.created, 1 thread.created, 4 message.created and 1 context.updated wait unpublished.
	if n := pendingEvents(t, be.MongoURI, be.Name+"_"); n < 8 {
		t.Fatalf("%d events pending after the kill, want at least 8: the writes' events were published before it", n)
	}
	watch := watchTopics(t, be.Brokers, be.Name, events.TopicIdentity, events.TopicMailbox, events.TopicContext)
	opts.Brokers = be.Brokers
	startChild(t, opts)

	for _, hash := range []string{alice, bob} {
		var d contract.ObjectCreatedData
		watch.wait(t, e, events.ObjectCreated, &d, func() bool { return d.Object.Hash == hash })
	}
	var tc contract.ThreadCreatedData
	watch.wait(t, e, events.ThreadCreated, &tc, func() bool { return tc.ThreadID == thread })
	for _, id := range messages {
		var d contract.MessageCreatedData
		watch.wait(t, e, events.MessageCreated, &d, func() bool { return d.MessageID == id })
	}
	var cu contract.ContextUpdatedData
	watch.wait(t, e, events.ContextUpdated, &cu, func() bool { return cu.Version == 2 })
	e.Eventually(t, func() bool { return pendingEvents(t, be.MongoURI, be.Name+"_") == 0 }, "the outboxes are empty")
}

// pendingEvents counts the outbox entries of every service database named with prefix.
func pendingEvents(t *testing.T, uri, prefix string) int64 {
	t.Helper()
	ctx := context.Background()
	client, db, err := mongox.Connect(ctx, uri, "admin")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(ctx)
	names, err := db.Client().ListDatabaseNames(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, name := range names {
		if strings.HasPrefix(name, prefix) {
			n, err := client.Database(name).Collection(events.OutboxCollection).CountDocuments(ctx, bson.D{})
			if err != nil {
				t.Fatal(err)
			}
			total += n
		}
	}
	return total
}
