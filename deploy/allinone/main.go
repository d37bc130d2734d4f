// Command allinone runs the whole svc suite in one process on embedded backends: FerretDB (with
// SQLite files under SVC_DATA_DIR, or PostgreSQL), kfake and miniredis, unless MONGO_URI,
// KAFKA_BROKERS or REDIS_URL name real servers. The gateway listens on SVC_ADDR.
package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/svcdev/svc/deploy/stack"
	"github.com/svcdev/svc/pkg/config"
	"github.com/svcdev/svc/pkg/embedded"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/server"
)

// Config is the all-in-one configuration.
type Config struct {
	Addr                 string   `env:"SVC_ADDR, default=127.0.0.1:8080"`
	BaseURL              string   `env:"SVC_BASE_URL"`
	DataDir              string   `env:"SVC_DATA_DIR, default=./data"`
	OutboundAllowPrivate bool     `env:"SVC_OUTBOUND_ALLOW_PRIVATE, default=false"`
	OutboundCAFile       string   `env:"SVC_OUTBOUND_CA_FILE"`
	LogLevel             string   `env:"SVC_LOG_LEVEL, default=info"`
	MongoURI             string   `env:"MONGO_URI"`
	KafkaBrokers         []string `env:"KAFKA_BROKERS"`
	RedisURL             string   `env:"REDIS_URL"`
	// FerretDBPostgreSQLURL backs the embedded FerretDB with a PostgreSQL server instead of
	// SQLite, for load tests.
	FerretDBPostgreSQLURL string `env:"SVC_FERRETDB_POSTGRESQL_URL"`
	PaymentVoucherSecret  string `env:"PAYMENT_VOUCHER_SECRET"`
	SigningKeysSecret     string `env:"SIGNING_KEYS_SECRET"`
	// OutboxRetain is how long the services keep what they published to the embedded broker,
	// to publish it again should the broker's data be lost (see startKafka).
	OutboxRetain time.Duration `env:"SVC_OUTBOX_RETAIN, default=15m"`
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := realMain(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "allinone:", err)
		os.Exit(1)
	}
}

func realMain(ctx context.Context) error {
	var cfg Config
	if err := config.Load(ctx, &cfg); err != nil {
		return err
	}
	base := server.NewLogger(cfg.LogLevel, "")
	log := base.With("service", "allinone")
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	// The gateway's port is taken before the backends pick theirs: free ports they may be given
	// include one just let go of, as SVC_ADDR's is after a restart.
	gatewayLn, err := listenGateway(cfg.Addr)
	if err != nil {
		return err
	}
	stops := []func(){func() { _ = gatewayLn.Close() }}
	defer func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}()
	// The secrets are read (or made) before any backend starts, so that a data directory never
	// holds data without the secret that sealed it, and a lost secret stops the start here.
	secret, err := dataDirSecret(cfg.DataDir, "voucher-secret", cfg.PaymentVoucherSecret)
	if err != nil {
		return err
	}
	signingSecret, err := signingKeysSecret(cfg)
	if err != nil {
		return err
	}
	if cfg.MongoURI == "" {
		m, err := embedded.StartMongo(ctx, embedded.MongoOptions{
			Dir: filepath.Join(cfg.DataDir, "mongo"), PostgreSQLURL: cfg.FerretDBPostgreSQLURL,
		})
		if err != nil {
			return err
		}
		stops = append(stops, m.Stop)
		cfg.MongoURI = m.URI
		log.Info("embedded FerretDB started", "uri", m.URI)
	}
	// Set below when the embedded broker runs: the services retain what they publish, and
	// publish it again when the broker lost it.
	brokerEnv := map[string]string{}
	if len(cfg.KafkaBrokers) == 0 {
		k, err := startKafka(cfg, log)
		if err != nil {
			return err
		}
		stops = append(stops, k.Stop)
		cfg.KafkaBrokers = k.Brokers
		brokerEnv["OUTBOX_RETAIN"] = cfg.OutboxRetain.String()
		brokerEnv["OUTBOX_REPUBLISH"] = strconv.FormatBool(k.Recovery.LostEvents())
	}
	if cfg.RedisURL == "" {
		// The event streams' buffer (feed-svc's svc:stream:… keys) outlives a restart, stopped
		// or killed, as a client resuming with Last-Event-ID expects; the rest of what svc keeps
		// in Redis (caches, rate limits) starts afresh.
		r, err := embedded.StartDurableRedis(filepath.Join(cfg.DataDir, "redis", "streams.aof"), streamKeyPrefix)
		if err != nil {
			return err
		}
		stops = append(stops, r.Stop)
		cfg.RedisURL = r.URL
		log.Info("embedded Redis started", "url", r.URL)
	}
	baseURL := cmp.Or(cfg.BaseURL, "http://"+cfg.Addr)
	// Every service sees the process environment (rate limits and other service settings), with
	// the all-in-one settings on top; the stack then sets addresses and database names.
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	maps.Copy(env, map[string]string{
		"OUTBOUND_ALLOW_PRIVATE": strconv.FormatBool(cfg.OutboundAllowPrivate),
		"OUTBOUND_CA_FILE":       cfg.OutboundCAFile,
		"PAYMENT_VOUCHER_SECRET": secret,
		"SIGNING_KEYS_SECRET":    signingSecret,
		"LOG_LEVEL":              cfg.LogLevel,
	})
	maps.Copy(env, brokerEnv)
	s, err := stack.Start(ctx, stack.Options{
		MongoURI: cfg.MongoURI, Brokers: cfg.KafkaBrokers, RedisURL: cfg.RedisURL,
		BaseURL: baseURL, GatewayListener: gatewayLn, Env: env, Log: base,
	})
	if err != nil {
		return err
	}
	log.Info("svc is up", "gateway", s.GatewayURL, "base_url", baseURL, "data_dir", cfg.DataDir,
		"vouchers", "PAYMENT_VOUCHER_SECRET=$(cat "+filepath.Join(cfg.DataDir, "voucher-secret")+") go run ./identity-svc/cmd/svc-voucher")
	greet(os.Stderr, baseURL, cfg.DataDir)
	<-ctx.Done()
	log.Info("shutting down")
	return s.Stop()
}

// startKafka starts the embedded broker on SVC_DATA_DIR/kafka, with every topic created, and
// says loudly what it found there. kfake's log survives SIGKILL (a write reaches its segment
// files before it is acknowledged, and start-up replays them); a broker directory that was
// deleted, replaced or cut lost events, which the services then publish again from what they
// retained (SVC_OUTBOX_RETAIN), and consumers dedupe by event id.
func startKafka(cfg Config, log *slog.Logger) (*embedded.Kafka, error) {
	k, err := embedded.StartKafka(embedded.KafkaOptions{
		DataDir: filepath.Join(cfg.DataDir, "kafka"), IDFile: filepath.Join(cfg.DataDir, "kafka-cluster-id"),
		Topics: events.Topics(""), Log: log,
	})
	if err != nil {
		return nil, err
	}
	switch k.Recovery {
	case embedded.KafkaUnclean:
		log.Warn("embedded Kafka: the last run did not stop in order; its log was rebuilt from its files", "detail", k.Detail)
	case embedded.KafkaRepaired, embedded.KafkaLost:
		log.Error("embedded Kafka lost events: the services publish again what they published in the last "+
			cfg.OutboxRetain.String()+" (SVC_OUTBOX_RETAIN); consumers skip what they had handled. Events published "+
			"before that and not yet consumed are gone: restore SVC_DATA_DIR from a backup to recover them",
			"recovery", k.Recovery.String(), "detail", k.Detail)
	}
	log.Info("embedded Kafka started", "brokers", k.Brokers, "recovery", k.Recovery.String())
	return k, nil
}

// signingKeysSecretFile is the file in the data directory that keeps the generated
// SIGNING_KEYS_SECRET.
const signingKeysSecretFile = "signing-keys-secret"

// streamKeyPrefix starts the Redis keys of feed-svc's event streams (docs/architecture.md, "Event
// streams"): the keys the embedded Redis keeps across restarts.
const streamKeyPrefix = "svc:stream:"

// signingKeysSecret is SIGNING_KEYS_SECRET as given, or the one kept in the data directory
// (generated on its first start). The signing keys svc holds are sealed with it: a data
// directory whose embedded database already holds data but whose secret file is gone is an
// error, not a new secret that would open none of them. (identity-svc checks the same at its
// start on any database: a secret that opens none of the newest sealed keys stops it.)
func signingKeysSecret(cfg Config) (string, error) {
	if cfg.SigningKeysSecret != "" {
		return cfg.SigningKeysSecret, nil
	}
	path := filepath.Join(cfg.DataDir, signingKeysSecretFile)
	_, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) && cfg.MongoURI == "" && cfg.FerretDBPostgreSQLURL == "" {
		mongoDir := filepath.Join(cfg.DataDir, "mongo")
		if held, err := os.ReadDir(mongoDir); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%s: %w", mongoDir, err)
		} else if len(held) > 0 {
			return "", fmt.Errorf("%s is missing, but %s holds data: the signing keys svc holds there are sealed with the "+
				"secret that file kept, and a new one would open none of them. Restore the file from a backup (or set "+
				"SIGNING_KEYS_SECRET to that secret); if this data never held signing keys, create it with a new secret "+
				"(openssl rand -hex 32 > %s)", path, mongoDir, path)
		}
	}
	return dataDirSecret(cfg.DataDir, signingKeysSecretFile, "")
}

// dataDirSecret is given (an operator's setting), or a secret generated once and kept in the
// data dir as name, so that what it protects stays valid across restarts: the vouchers issued
// for this stack (PAYMENT_VOUCHER_SECRET), the signing keys it sealed (SIGNING_KEYS_SECRET).
func dataDirSecret(dataDir, name, given string) (string, error) {
	if given != "" {
		return given, nil
	}
	path := filepath.Join(dataDir, name)
	raw, err := os.ReadFile(path)
	if err == nil {
		return strings.TrimSpace(string(raw)), nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	var b [32]byte
	_, _ = rand.Read(b[:])
	secret := hex.EncodeToString(b[:])
	if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return secret, nil
}

// listenGateway listens on SVC_ADDR before anything starts, so that a busy port is said in the
// words a person set it with rather than as a bare "address already in use" after the backends
// started.
func listenGateway(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, fmt.Errorf("SVC_ADDR %s is already in use (another svc, or another program, listens there): stop it, or choose another address, e.g. SVC_ADDR=127.0.0.1:8081", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("SVC_ADDR %s: %w", addr, err)
	}
	return ln, nil
}

// greet tells a person, whatever the log level, where svc answers and what to do next.
func greet(w io.Writer, baseURL, dataDir string) {
	fmt.Fprintf(w, `
svc is ready at %[1]s (data in %[2]s; Ctrl-C stops it)
  create an object:  curl -s -X POST %[1]s/api/objects -d '{"initial_llm_txt":"# Ada","visibility":"public"}'
  agent manual:      %[1]s/llms.txt    API: %[1]s/openapi.json    MCP: %[1]s/mcp
  the README's "A first walk" goes on from there.

`, baseURL, dataDir)
}
