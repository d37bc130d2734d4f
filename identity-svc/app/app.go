// Package app wires identity-svc: configuration, storage, events and routes. It is public (not
// internal) so that the all-in-one mode can run the service in-process with the same wiring.
package app

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/svcdev/svc/identity-svc/internal/api"
	"github.com/svcdev/svc/identity-svc/internal/consumers"
	"github.com/svcdev/svc/identity-svc/internal/object"
	"github.com/svcdev/svc/identity-svc/internal/payment"
	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/config"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/service"
)

// Name is the service name: its audience for internal tokens and its default database.
const Name = "identity-svc"

// Config is identity-svc's configuration.
type Config struct {
	config.Service
	// PaymentVoucherSecret signs operator-issued vouchers for paid custom hashes.
	PaymentVoucherSecret string `env:"PAYMENT_VOUCHER_SECRET"`
	SigningKeys
	// CachedObjects bounds how many folded objects a replica keeps in memory.
	CachedObjects int `env:"IDENTITY_CACHED_OBJECTS, default=10000"`
}

// SigningKeys are the operator's secrets that seal the private halves of the objects' signing
// keys svc holds: each 32 random bytes, in hex or base64.
type SigningKeys struct {
	// Secret is the current secret: it seals every new key. A sealed key names the secret that
	// sealed it by a key id derived from it.
	Secret string `env:"SIGNING_KEYS_SECRET, required"`
	// OldSecrets are earlier secrets (comma-separated): they open the keys they sealed, and never
	// seal. A rotation sets a new Secret, lists the previous one here, runs reseal-signing-keys,
	// and then drops it.
	OldSecrets []string `env:"SIGNING_KEYS_SECRETS_OLD"`
}

// Sealer returns the sealer of the configured secrets.
func (c SigningKeys) Sealer() (*object.Sealer, error) {
	return object.NewSealer(c.Secret, c.OldSecrets...)
}

// App is a running identity-svc: the shared service base (Serve, Run, Close) with its routes and
// consumers.
type App struct{ *service.Base }

// New connects to the backends and builds the service.
func New(ctx context.Context, cfg Config, log *slog.Logger) (*App, error) {
	sealer, err := cfg.SigningKeys.Sealer()
	if err != nil {
		return nil, err
	}
	b, err := service.New(ctx, Name, cfg.Service, log, service.Options{Indexes: store.Indexes})
	if err != nil {
		return nil, err
	}
	etags := httpx.NewETags(b.Redis, b.Log, time.Hour)
	st := store.New(b.DB)
	// A lost or wrong secret would leave every key svc holds unopened while jwks.json still
	// advertises them: the start stops instead, naming the setting.
	opened, failed, err := sealer.Check(ctx, st, object.CheckSample)
	if err != nil {
		b.Close()
		return nil, err
	}
	if failed > 0 {
		b.Log.Warn("some sealed signing keys open under none of the configured secrets: svc cannot sign for those objects; "+
			"list the secret they were sealed with in "+object.EnvSigningKeysSecretsOld,
			"opened", opened, "unopened", failed, "secret_ids", sealer.KIDs())
	}
	b.Log.Info("signing keys secret", "secret_id", sealer.KID(), "secret_ids", sealer.KIDs())
	// Every writer of an object's facts replaces its ETag, so folded objects are cached under it.
	st.CacheObjects(etags.Tokens(), cfg.CachedObjects)
	objects := &object.Service{
		Store: st, Outbox: b.Outbox, Redis: b.Redis, Payments: payment.NewVouchers(cfg.PaymentVoucherSecret), Log: b.Log,
		ETags:   etags,
		Sealer:  sealer,
		BaseURL: strings.TrimRight(cfg.BaseURL, "/"), RequestSigner: b.RequestSigner(),
	}
	api.Register(b.API, objects, etags)
	claims := &consumers.Claims{Objects: objects}
	b.Consume(service.Consumer{Group: consumers.ClaimsGroup, Topics: consumers.ClaimsTopics, Handle: claims.Handle})
	b.Consume(service.Consumer{Group: consumers.ProfilesGroup, Topics: consumers.ProfilesTopics, Handle: (&consumers.Profiles{Objects: objects}).Handle})
	// Until it has run, objects, keys, associations and claim facts an earlier release stored are
	// missing from their lists.
	b.Once("ranges upgrade", func(ctx context.Context) error {
		n, err := st.Upgrade(ctx)
		if n > 0 && err == nil {
			b.Log.Info("carried what an earlier release stored over to the ranges", "documents", n)
		}
		return err
	})
	return &App{Base: b}, nil
}
