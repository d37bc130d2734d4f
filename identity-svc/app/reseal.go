package app

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"

	"github.com/svcdev/svc/identity-svc/internal/object"
	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/config"
	"github.com/svcdev/svc/pkg/mongox"
)

// ResealCommand is the identity-svc subcommand that reseals every signing key svc holds under
// the current SIGNING_KEYS_SECRET.
const ResealCommand = "reseal-signing-keys"

// resealPage is how many objects a reseal reads at a time: its memory is bounded by this many
// objects' keys.
const resealPage = 200

// ResealConfig is what the reseal command reads: the database and the secrets, as identity-svc
// is configured.
type ResealConfig struct {
	config.Mongo
	SigningKeys
}

// Reseal seals every signing key svc holds under the current secret (SIGNING_KEYS_SECRET): a
// key sealed under an earlier secret (SIGNING_KEYS_SECRETS_OLD), or before keys named their
// secret, is sealed again; the others are left as they are, so a second run does nothing. It
// pages through the objects, so its memory stays bounded whatever the database holds. An error
// when a key opens under none of the secrets (the others are still resealed): that secret must
// not be dropped yet.
func Reseal(ctx context.Context, cfg ResealConfig, log *slog.Logger) (object.ResealStats, error) {
	sealer, err := cfg.SigningKeys.Sealer()
	if err != nil {
		return object.ResealStats{}, err
	}
	cfg.Database = cmp.Or(cfg.Database, Name)
	client, db, err := mongox.Connect(ctx, cfg.URI, cfg.Database, cfg.CommandMonitor)
	if err != nil {
		return object.ResealStats{}, err
	}
	defer func() { _ = client.Disconnect(context.Background()) }()
	log.Info("resealing signing keys", "secret_id", sealer.KID(), "secret_ids", sealer.KIDs())
	stats, err := sealer.ResealAll(ctx, store.New(db), resealPage, func(s object.ResealStats) {
		log.Info("resealing signing keys", "objects", s.Objects, "keys", s.Keys, "resealed", s.Resealed, "unopened", s.Failed)
	})
	if err != nil {
		return stats, fmt.Errorf("reseal signing keys: %w", err)
	}
	log.Info("signing keys resealed", "objects", stats.Objects, "keys", stats.Keys, "resealed", stats.Resealed, "unopened", stats.Failed)
	if stats.Failed > 0 {
		return stats, fmt.Errorf("%d sealed signing keys open under none of the configured secrets (%s, %s), e.g. %v: keep the secret they were sealed with in %s",
			stats.Failed, object.EnvSigningKeysSecret, object.EnvSigningKeysSecretsOld, stats.FailedKeys, object.EnvSigningKeysSecretsOld)
	}
	return stats, nil
}
