// Package testkit gives tests real backends: an embedded FerretDB and kfake shared by the test
// binary (or real servers named by MONGO_URI and KAFKA_BROKERS), a fresh miniredis per test (or
// REDIS_URL), and a database and topic prefix of their own for every test, so tests run in
// parallel without seeing each other's data.
package testkit

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/embedded"
	"github.com/svcdev/svc/pkg/mongox"
)

// shared holds the backends of this test binary, started on first use.
var shared struct {
	once    sync.Once
	err     error
	dir     string
	mongo   *embedded.Mongo
	kafka   *embedded.Kafka
	uri     string
	brokers []string
}

var counter atomic.Int64

// Main runs the tests of a package and stops the shared backends afterwards; the run fails when
// one of checks reports false after tests that passed. Use it as
// `func TestMain(m *testing.M) { testkit.Main(m) }`.
func Main(m *testing.M, checks ...func() bool) {
	code := m.Run()
	for _, check := range checks {
		if !check() && code == 0 {
			code = 1
		}
	}
	if shared.mongo != nil {
		shared.mongo.Stop()
	}
	if shared.kafka != nil {
		shared.kafka.Stop()
	}
	_ = os.RemoveAll(shared.dir) // "" when nothing was made: a no-op
	os.Exit(code)
}

func start() {
	shared.uri = os.Getenv("MONGO_URI")
	if b := os.Getenv("KAFKA_BROKERS"); b != "" {
		shared.brokers = strings.Split(b, ",")
	}
	if shared.uri == "" {
		shared.dir, shared.err = os.MkdirTemp("", "svc-testkit-")
		if shared.err != nil {
			return
		}
		shared.mongo, shared.err = embedded.StartMongo(context.Background(), embedded.MongoOptions{
			Dir: shared.dir, PostgreSQLURL: os.Getenv("FERRETDB_POSTGRESQL_URL"),
		})
		if shared.err != nil {
			return
		}
		shared.uri = shared.mongo.URI
	}
	if shared.brokers == nil {
		shared.kafka, shared.err = embedded.StartKafka(embedded.KafkaOptions{})
		if shared.err != nil {
			return
		}
		shared.brokers = shared.kafka.Brokers
	}
}

// Env is where a test's backends are.
type Env struct {
	MongoURI string
	// Name is unique to the test: use it (or derive from it) for database names, the Kafka topic
	// prefix and consumer groups.
	Name     string
	Brokers  []string
	RedisURL string
}

var unsafeChars = regexp.MustCompile(`[^a-z0-9]+`)

// Backends returns the test's backends, starting the shared ones on first use.
func Backends(t testing.TB) Env {
	t.Helper()
	shared.once.Do(start)
	if shared.err != nil {
		t.Fatalf("start test backends: %v", shared.err)
	}
	name := unsafeChars.ReplaceAllString(strings.ToLower(t.Name()), "_")
	name = fmt.Sprintf("t%d_%s", counter.Add(1), strings.Trim(name[:min(len(name), 24)], "_"))
	env := Env{MongoURI: shared.uri, Name: name, Brokers: shared.brokers}
	if u := os.Getenv("REDIS_URL"); u != "" {
		env.RedisURL = redisDatabase(t, u)
	} else {
		r, err := embedded.StartRedis()
		if err != nil {
			t.Fatalf("start redis: %v", err)
		}
		t.Cleanup(r.Stop)
		env.RedisURL = r.URL
	}
	return env
}

// redisDatabases is how many databases the server of REDIS_URL has, asked once.
var redisDatabases struct {
	once sync.Once
	n    int
	err  error
}

// redisDatabase gives the test a database of its own on the server of REDIS_URL, emptied: the
// services' keys (rate limits per address, caches) are not prefixed per deployment, so stacks
// sharing one database would count each other's requests. Database 0 keeps the turn; with
// fewer databases than tests running at once, two tests may share one (.ci/with-system-backends
// starts its redis-server with 1,024).
func redisDatabase(t testing.TB, raw string) string {
	t.Helper()
	opts, err := redis.ParseURL(raw)
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	ctx := context.Background()
	redisDatabases.once.Do(func() {
		c := redis.NewClient(opts)
		defer c.Close()
		cfg, err := c.ConfigGet(ctx, "databases").Result()
		if err != nil {
			redisDatabases.err = err
			return
		}
		redisDatabases.n, redisDatabases.err = strconv.Atoi(cfg["databases"])
	})
	if redisDatabases.err != nil || redisDatabases.n < 2 {
		t.Fatalf("REDIS_URL: how many databases: %v (%d)", redisDatabases.err, redisDatabases.n)
	}
	// The next database comes from a counter in database 0, so that the test binaries go test
	// runs at once take turns too.
	zero := *opts
	zero.DB = 0
	c0 := redis.NewClient(&zero)
	next, err := c0.Incr(ctx, "testkit:next-database").Result()
	_ = c0.Close()
	if err != nil {
		t.Fatalf("REDIS_URL: next database: %v", err)
	}
	opts.DB = 1 + int(next%int64(redisDatabases.n-1))
	c := redis.NewClient(opts)
	defer c.Close()
	if err := c.FlushDB(ctx).Err(); err != nil {
		t.Fatalf("REDIS_URL: empty database %d: %v", opts.DB, err)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	u.Path = "/" + strconv.Itoa(opts.DB)
	return u.String()
}

// Database returns a database of the test's own on the shared MongoDB, dropped when it ends.
func Database(t testing.TB, env Env, suffix string) *mongo.Database {
	t.Helper()
	client, db, err := mongox.Connect(context.Background(), env.MongoURI, env.Name+"_"+suffix)
	if err != nil {
		t.Fatalf("connect to test database: %v", err)
	}
	t.Cleanup(func() {
		_ = db.Drop(context.Background())
		_ = client.Disconnect(context.Background())
	})
	return db
}

// Logger returns a logger that writes through t.Log when the test is verbose, else discards.
func Logger(t testing.TB) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Silent returns the address of a server that accepts connections and never answers, as a
// backend behind a silent network does: a client's calls to it hang until their deadlines. It and
// its connections close when the test ends.
func Silent(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = conn.Close() })
			go func() { _, _ = io.Copy(io.Discard, conn) }()
		}
	}()
	return ln.Addr().String()
}
