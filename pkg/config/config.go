// Package config loads typed service configuration from environment variables and fails fast
// with a message that names every missing or malformed variable.
package config

import (
	"context"
	"fmt"
	"time"

	"github.com/sethvargo/go-envconfig"
	"go.mongodb.org/mongo-driver/v2/event"
)

// Load fills cfg (a pointer to a struct with `env` tags) from the process environment.
func Load(ctx context.Context, cfg any) error {
	return LoadFrom(ctx, cfg, envconfig.OsLookuper())
}

// LoadMap fills cfg from a map instead of the process environment; the all-in-one mode and tests
// use it so that several services with different settings can live in one process.
func LoadMap(ctx context.Context, cfg any, env map[string]string) error {
	return LoadFrom(ctx, cfg, envconfig.MapLookuper(env))
}

// LoadFrom fills cfg through the given lookuper.
func LoadFrom(ctx context.Context, cfg any, l envconfig.Lookuper) error {
	if err := envconfig.ProcessWith(ctx, &envconfig.Config{Target: cfg, Lookuper: l}); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	return nil
}

// Server is the HTTP part every service shares.
type Server struct {
	Addr            string        `env:"ADDR, default=:8080"`
	LogLevel        string        `env:"LOG_LEVEL, default=info"`
	ShutdownTimeout time.Duration `env:"SHUTDOWN_TIMEOUT, default=20s"`
	BaseURL         string        `env:"BASE_URL, default=http://127.0.0.1:8080"`
}

// Mongo locates the service's own database.
type Mongo struct {
	URI      string `env:"MONGO_URI, required"`
	Database string `env:"MONGO_DATABASE"`
	// CommandMonitor, when set by the code that starts the service (never by the environment),
	// sees every command the service's client sends: tests count store commands per request.
	CommandMonitor *event.CommandMonitor `env:",noinit"`
}

// Kafka locates the event broker.
type Kafka struct {
	Brokers     []string `env:"KAFKA_BROKERS, required"`
	TopicPrefix string   `env:"KAFKA_TOPIC_PREFIX"`
	// TopicPartitions, when above 0, makes a service refuse to start unless every topic exists
	// with at least that many partitions (a consumer group uses at most one replica per partition).
	TopicPartitions int `env:"KAFKA_TOPIC_PARTITIONS, default=0"`
}

// Events tunes the outbox relay and the event consumers.
type Events struct {
	// OutboxSweepInterval is how often the relay looks for pending events that no live writer
	// handed to it (a crashed replica's, or ones published while Kafka was down).
	OutboxSweepInterval time.Duration `env:"OUTBOX_SWEEP_INTERVAL, default=5s"`
	// OutboxRecoverAfter is the age from which the sweep takes over a pending event.
	OutboxRecoverAfter time.Duration `env:"OUTBOX_RECOVER_AFTER, default=10s"`
	// OutboxDiscardAfter is the age from which a pending event whose write never happened is
	// dropped; it must exceed the longest time a request takes from staging to its write.
	OutboxDiscardAfter time.Duration `env:"OUTBOX_DISCARD_AFTER, default=5m"`
	// OutboxRetain keeps published events that long (0: not at all), so that they can be
	// published again after a broker lost them (the all-in-one's embedded broker sets it).
	OutboxRetain time.Duration `env:"OUTBOX_RETAIN"`
	// OutboxRepublish publishes the retained events again at start-up: the all-in-one sets it
	// when its embedded broker's data was lost or cut.
	OutboxRepublish bool `env:"OUTBOX_REPUBLISH"`
	// ConsumerRetryMin and ConsumerRetryMax bound the backoff between attempts of a failing handler.
	ConsumerRetryMin time.Duration `env:"CONSUMER_RETRY_MIN, default=200ms"`
	ConsumerRetryMax time.Duration `env:"CONSUMER_RETRY_MAX, default=30s"`
	// ConsumerRetryFor is how long a failing event is retried before it is dead-lettered.
	ConsumerRetryFor time.Duration `env:"CONSUMER_RETRY_FOR, default=1h"`
}

// Redis locates the shared cache.
type Redis struct {
	URL string `env:"REDIS_URL, required"`
}

// InternalAuth holds what a backend service needs of internal JWTs: the gateway's public key,
// which verifies the only tokens that carry a principal, and the key services share to call each
// other, whose tokens never do.
type InternalAuth struct {
	// GatewayPublicKey is the gateway's Ed25519 public key: base64 of its 32 bytes, or PEM (a
	// public key or a certificate holding it).
	GatewayPublicKey string `env:"GATEWAY_JWT_PUBLIC_KEY, required"`
	// ServiceKey is the services' Ed25519 key: base64 of a 32-byte seed, or PEM PKCS #8.
	ServiceKey string `env:"SERVICE_JWT_KEY, required"`
}

// GatewayAuth holds the gateway's own key, which signs the tokens that carry a principal. No
// other service has it.
type GatewayAuth struct {
	// GatewayKey is an Ed25519 key: base64 of a 32-byte seed, or PEM PKCS #8.
	GatewayKey string `env:"GATEWAY_JWT_KEY, required"`
}

// Outbound configures fetches of third-party URLs (webhooks, claims, ingest, sync).
type Outbound struct {
	AllowPrivate bool   `env:"OUTBOUND_ALLOW_PRIVATE, default=false"`
	CAFile       string `env:"OUTBOUND_CA_FILE"`
	// Ports may be dialled by outbound fetches (80 and 443 when empty), comma-separated.
	Ports []int `env:"OUTBOUND_PORTS"`
	// MaxConcurrent bounds the memory-holding outbound work (a fetch and its parse) a service
	// runs at once; MaxQueued the callers that wait for a turn, each at most QueueWait. Past
	// that a caller is refused at once (outbound.Limiter).
	MaxConcurrent int           `env:"OUTBOUND_MAX_CONCURRENT, default=4"`
	MaxQueued     int           `env:"OUTBOUND_MAX_QUEUED, default=8"`
	QueueWait     time.Duration `env:"OUTBOUND_QUEUE_WAIT, default=5s"`
}

// SetCommandMonitor attaches a command monitor; the all-in-one stack reaches it through any
// service configuration that embeds Mongo.
func (m *Mongo) SetCommandMonitor(mon *event.CommandMonitor) { m.CommandMonitor = mon }

// Service is the configuration shared by every backend service.
type Service struct {
	Server
	Mongo
	Kafka
	Events
	Redis
	InternalAuth
	// IdentityURL is the internal address of identity-svc (unused by identity-svc itself).
	IdentityURL string `env:"IDENTITY_URL"`
}
