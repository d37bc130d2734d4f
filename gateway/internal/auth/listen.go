package auth

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/pkg/identity"
)

// Listen applies the revocations announced on identity.RevokedChannel until ctx ends. Each
// (re)subscription forgets every cached principal, since announcements made while the
// subscription was down are lost; the local cache then refills from Redis, where the
// revocation's tombstone is.
func (a *Authenticator) Listen(ctx context.Context, rdb *redis.Client, log *slog.Logger) {
	ps := rdb.Subscribe(ctx, identity.RevokedChannel)
	// A blocked Receive does not watch ctx: closing the subscription ends it.
	stop := context.AfterFunc(ctx, func() { _ = ps.Close() })
	defer func() {
		stop()
		_ = ps.Close()
	}()
	for {
		msg, err := ps.Receive(ctx)
		if ctx.Err() != nil {
			return
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				a.Forget()
			}
		case *redis.Message:
			a.Revoked(m.Payload)
		}
		if err != nil {
			log.WarnContext(ctx, "revocation announcements interrupted: cached keys are trusted for at most LocalTTL", "error", err)
			a.Forget()
			select { // Redis is down: try again in a while, not in a busy loop
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
	}
}
