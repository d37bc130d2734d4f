// Package events holds what identity-svc consumes: verified claims, which mark an object's
// mailbox as claimed and record social handles that make a matching custom hash free.
package events

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcdev/svc/identity-svc/internal/store"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
	"github.com/svcdev/svc/pkg/httpx"
	"github.com/svcdev/svc/pkg/identity"
)

// Claims handles claims-svc's events.
type Claims struct {
	Store *store.Store
	Redis *redis.Client
	ETags *httpx.ETags
}

// Handle implements events.Handler; it is idempotent.
func (h *Claims) Handle(ctx context.Context, ev events.Event) error {
	if ev.Type != events.ClaimVerified {
		return nil
	}
	var d contract.ClaimVerifiedData
	if err := ev.Decode(&d); err != nil {
		return events.Permanent(err) // a malformed event cannot get better by retrying
	}
	obj, err := h.Store.Object(ctx, ev.ObjectID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // the object is gone: nothing to mark
	}
	if err != nil {
		return err
	}
	at, err := time.Parse(clock.Layout, d.VerifiedAt)
	if err != nil {
		at = clock.Now()
	}
	if err := h.Store.SetMailboxStatus(ctx, obj.ID, "claimed", at); err != nil {
		return err
	}
	h.ETags.Changed(ctx, obj.ID)
	if handle := socialHandle(d.ClaimedTarget); handle != "" {
		if err := h.Store.AddSocialHandle(ctx, obj.ID, store.SocialHandle{Network: d.ProofType, Handle: handle, ClaimID: d.ClaimID}); err != nil {
			return err
		}
	}
	keys := make([]string, len(obj.Hashes))
	for i, hash := range obj.Hashes {
		keys[i] = identity.HashCacheKey(hash)
	}
	return h.Redis.Del(ctx, keys...).Err()
}

// socialHandle reads a handle from "@name", "name" or a profile URL.
func socialHandle(target string) string {
	target = strings.TrimSpace(target)
	if u, err := url.Parse(target); err == nil && u.Host != "" {
		target = strings.Trim(u.Path, "/")
		if i := strings.LastIndex(target, "/"); i >= 0 {
			target = target[i+1:]
		}
	}
	return strings.ToLower(strings.TrimPrefix(target, "@"))
}
