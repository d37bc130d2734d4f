// Package service assembles what every backend service has in common: logger, MongoDB, Redis,
// the event producer and outbox relay, the consumers and their dead letters, the internal-token
// middleware, probes, metrics and a Run with graceful shutdown. A service adds its routes, its
// consumers and its indexes.
package service

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/redis/go-redis/v9"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/svcdev/svc/pkg/authn"
	"github.com/svcdev/svc/pkg/config"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpsig"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
	"github.com/svcdev/svc/pkg/mongox"
	"github.com/svcdev/svc/pkg/server"
	"github.com/svcdev/svc/pkg/signing"
)

// Base is the shared part of a service.
type Base struct {
	Name     string
	Config   config.Service
	Log      *slog.Logger
	Mongo    *mongo.Client
	DB       *mongo.Database
	Redis    *redis.Client
	Producer *events.Producer
	// Outbox stages and relays the events of the service's writes.
	Outbox *events.Outbox
	// Key signs the tokens of the service's calls to other services; Verifier checks the tokens
	// of the calls it receives.
	Key      *authn.SigningKey
	Verifier *authn.Verifier
	Registry *prometheus.Registry
	Engine   *gin.Engine
	// API is the router group of every route reached through the gateway or another service: it
	// requires a valid internal token addressed to this service.
	API      *gin.RouterGroup
	loops    []func(context.Context) error
	handlers map[string]events.Handler
	// calls and consumes are what the service was built to call and consume (Wiring).
	calls, consumes map[string]bool
	// health is what the consumers know to be wrong with their partitions.
	health *events.Health
	// lags measures each consumer group's lag ("<service>.<group>"), exported as a gauge and
	// reported to the gateway (see reportLag).
	lags map[string]*events.Lag
}

// Wiring is a service's runtime edges as its constructor made them: the services it calls
// synchronously (the audiences of its clients) and the topics it consumes. docs/architecture.md
// draws them, and a test compares the drawing with every service's Wiring.
type Wiring struct {
	Calls    []string
	Consumes []string
}

// Wiring reports the service's runtime edges, each list sorted.
func (b *Base) Wiring() Wiring {
	return Wiring{Calls: slices.Sorted(maps.Keys(b.calls)), Consumes: slices.Sorted(maps.Keys(b.consumes))}
}

// Options lists what a service adds to the base.
type Options struct {
	Indexes []mongox.Index
}

// eventIndexes create the event collections at start-up (FerretDB needs that) and index what
// MongoDB needs beside _id: the dedupe records by expires_at, which the consumers' periodic sweep
// deletes the expired ones by, and the dead letters by parked_at, which an operator's list sorts
// by (a dead letter is written only when a consumer gives up on an event, so the index costs the
// serving path nothing).
var eventIndexes = append([]mongox.Index{
	{Collection: processedEvents, Keys: bson.D{{Key: "expires_at", Value: 1}}},
	{Collection: events.DeadLetterCollection, Keys: bson.D{{Key: "parked_at", Value: 1}}},
}, events.OutboxIndexes...)

const processedEvents = "processed_events"

// New connects to the backends and builds the engine. On error it releases what it opened.
func New(ctx context.Context, name string, cfg config.Service, log *slog.Logger, opts Options) (b *Base, err error) {
	if log == nil {
		log = server.NewLogger(cfg.LogLevel, name)
	}
	cfg.Database = cmp.Or(cfg.Database, name)
	key, verifier, err := internalAuth(cfg.InternalAuth)
	if err != nil {
		return nil, err
	}
	b = &Base{Name: name, Config: cfg, Log: log, Key: key, Verifier: verifier, Registry: prometheus.NewRegistry(), handlers: map[string]events.Handler{},
		calls: map[string]bool{}, consumes: map[string]bool{}, health: events.NewHealth(), lags: map[string]*events.Lag{}}
	defer func() {
		if err != nil {
			b.Close()
		}
	}()
	b.Mongo, b.DB, err = mongox.Connect(ctx, cfg.URI, cfg.Database, cfg.CommandMonitor)
	if err != nil {
		return nil, err
	}
	if err = mongox.EnsureIndexes(ctx, b.DB, append(opts.Indexes, eventIndexes...)); err != nil {
		return nil, err
	}
	b.Redis, err = ConnectRedis(ctx, cfg.Redis.URL)
	if err != nil {
		return nil, err
	}
	if cfg.TopicPartitions > 0 {
		if err = events.CheckTopics(ctx, cfg.Brokers, events.Topics(cfg.TopicPrefix), cfg.TopicPartitions); err != nil {
			return nil, err
		}
	}
	b.Producer = events.NewProducer(cfg.Brokers, cfg.TopicPrefix)
	b.Outbox = events.NewOutbox(b.DB, b.Producer, log, events.OutboxOptions{
		SweepInterval: cfg.OutboxSweepInterval, RecoverAfter: cfg.OutboxRecoverAfter, DiscardAfter: cfg.OutboxDiscardAfter,
		Retain: cfg.OutboxRetain, Republish: cfg.OutboxRepublish,
	})
	b.Go(b.Outbox.Run)
	b.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		countGauge("svc_outbox_pending", "Events staged by writes and not yet acknowledged by Kafka.",
			func(ctx context.Context) (int64, error) { return events.PendingEvents(ctx, b.DB) }),
		countGauge("svc_dead_events", "Events the consumers parked as dead letters.",
			func(ctx context.Context) (int64, error) {
				return b.DB.Collection(events.DeadLetterCollection).EstimatedDocumentCount(ctx)
			}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "svc_consumer_stalled_partitions",
			Help: "Partitions whose fetches keep failing (an unreadable batch, a broker that does not answer)."},
			func() float64 { return float64(b.health.Failing()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "svc_consumer_offset_resets_total",
			Help: "Committed offsets found past their partition's end (the broker lost events); read from the end."},
			func() float64 { return float64(b.health.OffsetResets()) }))
	b.Engine = httpx.NewEngine(log, httpx.NewMetrics(b.Registry))
	server.MountProbes(b.Engine, b.Registry, map[string]server.Check{
		"mongo": func(ctx context.Context) error { return mongox.Ping(ctx, b.DB) },
		"redis": func(ctx context.Context) error { return b.Redis.Ping(ctx).Err() },
		"kafka": func(ctx context.Context) error { return events.Ping(ctx, cfg.Brokers) },
		"consumers": func(context.Context) error {
			if msg, stalled := b.health.Problem(); msg != "" {
				return &server.Problem{Message: msg, Warning: !stalled}
			}
			return nil
		},
	})
	b.API = b.Engine.Group("/", authn.Require(verifier, name))
	mountDeadLetters(b.API, events.NewDeadLetters(b.DB, b.DB.Collection(processedEvents), b.handlers))
	return b, nil
}

// RequestSigner is the signer of svc's own outbound requests (webhook deliveries, claim checks,
// ingest and sync fetches): one Ed25519 key every service derives from the key they share
// (SERVICE_JWT_KEY), published at httpsig.DirectoryPath under BASE_URL.
func (b *Base) RequestSigner() *httpsig.Signer {
	return RequestSigner(b.Key, b.Config.BaseURL)
}

// RequestSignerOf is the signer RequestSigner returns, read from the configuration, for the
// clients a service builds before it connects.
func RequestSignerOf(cfg config.Service) (*httpsig.Signer, error) {
	key, err := authn.ParseSigningKey(cfg.ServiceKey)
	if err != nil {
		return nil, fmt.Errorf("configuration: SERVICE_JWT_KEY: %w", err)
	}
	return RequestSigner(key, cfg.BaseURL), nil
}

// RequestSigner is Base.RequestSigner for the services' key and the public base URL.
func RequestSigner(key *authn.SigningKey, baseURL string) *httpsig.Signer {
	priv := ed25519.NewKeyFromSeed(key.Derive("svc web bot auth")[:ed25519.SeedSize])
	kid, err := signing.Thumbprint(priv.Public().(ed25519.PublicKey))
	if err != nil {
		panic(err) // an Ed25519 public key always has a thumbprint
	}
	return &httpsig.Signer{Key: priv, KeyID: kid, Agent: strings.TrimRight(baseURL, "/") + httpsig.DirectoryPath}
}

// internalAuth reads the services' signing key and the gateway's public key.
func internalAuth(cfg config.InternalAuth) (*authn.SigningKey, *authn.Verifier, error) {
	key, err := authn.ParseSigningKey(cfg.ServiceKey)
	if err != nil {
		return nil, nil, fmt.Errorf("configuration: SERVICE_JWT_KEY: %w", err)
	}
	gateway, err := authn.ParsePublicKey(cfg.GatewayPublicKey)
	if err != nil {
		return nil, nil, fmt.Errorf("configuration: GATEWAY_JWT_PUBLIC_KEY: %w", err)
	}
	verifier, err := authn.NewVerifier(gateway, key)
	if err != nil {
		return nil, nil, fmt.Errorf("configuration: SERVICE_JWT_KEY: %w", err)
	}
	return key, verifier, nil
}

// countGauge is a gauge of a count read at each scrape (-1 when the read fails).
func countGauge(name, help string, count func(context.Context) (int64, error)) prometheus.Collector {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n, err := count(ctx)
		if err != nil {
			return -1
		}
		return float64(n)
	})
}

// ConnectRedis opens and pings a Redis client.
func ConnectRedis(ctx context.Context, url string) (*redis.Client, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis url: %w", err)
	}
	c := redis.NewClient(opts)
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("redis ping: %w", err)
	}
	return c, nil
}

// Go registers a background loop that runs with the service and stops with it.
func (b *Base) Go(loop func(context.Context) error) { b.loops = append(b.loops, loop) }

// onceRetry is how long Once waits after a failed step before it runs it again.
const onceRetry = 30 * time.Second

// Once registers a one-off data change (an upgrade's backfill: once per database, since its step
// leaves a marker) that runs beside serving and again every 30 s while it fails ("<what> failed;
// retrying"), until it succeeds or the service stops.
func (b *Base) Once(what string, step func(context.Context) error) {
	b.Go(func(ctx context.Context) error {
		// A one-off data change may read a whole collection of an earlier release's layout.
		ctx = mongox.Unbounded(ctx, "one-off: "+what)
		for {
			err := step(ctx)
			if err == nil {
				return nil
			}
			b.Log.Warn(what+" failed; retrying", "error", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(onceRetry):
			}
		}
	})
}

// Every registers a background loop that calls fn every interval until the service stops; a
// failure is logged as "<what> failed" and the loop goes on (every replica runs it, so fn must be
// safe to run on several at once).
func (b *Base) Every(interval time.Duration, what string, fn func(context.Context) error) {
	b.Go(func(ctx context.Context) error {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
				if err := fn(ctx); err != nil && ctx.Err() == nil {
					b.Log.Warn(what+" failed", "error", err)
				}
			}
		}
	})
}

// Consumer is one consumer group of a service: the topics it reads and the one handler that
// takes their events. Set exactly one of Handle and Batch.
type Consumer struct {
	// Group names the group within the service (declared once, in its consumers package); the
	// group id is "<service>.<group>".
	Group  string
	Topics []string
	// Handle takes one event at a time. Unless Idempotent, each event is deduped through the
	// service's own processed_events collection.
	Handle events.Handler
	// Idempotent says that Handle is idempotent by its own writes (each an insert keyed by the
	// event), so no dedupe record is read or written: two store commands less per event.
	Idempotent bool
	// Batch takes the events a partition has ready in one call (see events.BatchHandler):
	// idempotent by its own writes, it writes a batch's documents in one command. A replayed
	// dead letter is handled as a batch of one.
	Batch events.BatchHandler
}

// Consume registers the runner of a consumer group, which parks what cannot be handled in the
// service's dead letters. It panics on a Consumer without exactly one handler: a wiring mistake
// that no start should get past.
func (b *Base) Consume(c Consumer) {
	switch {
	case (c.Handle == nil) == (c.Batch == nil):
		panic("service: consumer " + c.Group + " needs exactly one of Handle and Batch")
	case c.Batch != nil:
		batch := c.Batch
		b.consume(c, func(ctx context.Context, ev events.Event) error { return batch(ctx, []events.Event{ev}) }, nil)
	case c.Idempotent:
		b.consume(c, c.Handle, nil)
	default:
		b.consume(c, c.Handle, b.DB.Collection(processedEvents))
	}
}

// consume registers c's runner; h handles one event (a replayed dead letter among them).
func (b *Base) consume(c Consumer, h events.Handler, processed *mongo.Collection) {
	id := b.Name + "." + c.Group
	b.handlers[id] = h
	for _, topic := range c.Topics {
		b.consumes[topic] = true
	}
	lag := b.measureLag(id, c.Group)
	b.Go(func(ctx context.Context) error {
		return events.Consume(ctx, events.ConsumerConfig{
			Brokers: b.Config.Brokers, Prefix: b.Config.TopicPrefix, GroupID: id, Topics: c.Topics,
			Processed: processed, Dead: b.DB.Collection(events.DeadLetterCollection),
			Handler: h, Batch: c.Batch, Log: b.Log, Health: b.health, Lag: lag,
			RetryMin: b.Config.ConsumerRetryMin, RetryMax: b.Config.ConsumerRetryMax, RetryFor: b.Config.ConsumerRetryFor,
		})
	})
}

// Identity returns the client of identity-svc at IDENTITY_URL (Redis-cached resolution).
func (b *Base) Identity() *identity.Client {
	return identity.NewClient(strings.TrimRight(b.Config.IdentityURL, "/"), b.Client("identity-svc"), b.Redis)
}

// RequireIdentityURL fails fast when a service that calls identity-svc is not told where it is.
func RequireIdentityURL(cfg config.Service) error {
	if cfg.IdentityURL == "" {
		return errors.New("configuration: IDENTITY_URL is required")
	}
	return nil
}

// Client returns an HTTP client that calls service audience with an internal token of the
// service's own, which carries no principal.
func (b *Base) Client(audience string) *http.Client {
	b.calls[audience] = true
	return &http.Client{Timeout: 10 * time.Second, Transport: &authn.Transport{
		Key: b.Key, Issuer: b.Name, Audience: audience, Base: sharedTransport,
	}}
}

// Transport returns the pooled transport of service-to-service calls.
func Transport() http.RoundTripper { return sharedTransport }

// sharedTransport pools connections between services; it is configured once and never changed.
var sharedTransport = &http.Transport{
	Proxy:               nil,
	MaxIdleConns:        512,
	MaxIdleConnsPerHost: 256,
	IdleConnTimeout:     90 * time.Second,
}

// Serve serves on ln until ctx ends, then shuts down gracefully.
func (b *Base) Serve(ctx context.Context, ln net.Listener) error {
	return server.Serve(ctx, ln, b.Engine, b.Config.ShutdownTimeout, b.Log, b.loops...)
}

// Run listens on the configured address and serves.
func (b *Base) Run(ctx context.Context) error { return server.Run(ctx, b.Config.Addr, b.Serve) }

// Close flushes the producer and closes the connections. It runs after Serve, whose loops (the
// relay among them) have stopped, so that the relay's last batch is flushed.
func (b *Base) Close() {
	if b.Producer != nil {
		_ = b.Producer.Close()
	}
	if b.Redis != nil {
		_ = b.Redis.Close()
	}
	if b.Mongo != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = b.Mongo.Disconnect(ctx)
	}
}
