// Package consumers holds what identity-svc consumes: verified claims, which mark an object's
// mailbox as claimed and record social handles that make a matching custom hash free.
package consumers

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/svcdev/svc/identity-svc/internal/object"
	"github.com/svcdev/svc/pkg/clock"
	"github.com/svcdev/svc/pkg/contract"
	"github.com/svcdev/svc/pkg/events"
)

// Claims handles claims-svc's events.
type Claims struct{ Objects *object.Service }

// Handle implements events.Handler; it is idempotent.
func (h *Claims) Handle(ctx context.Context, ev events.Event) error {
	if ev.Type != events.ClaimVerified {
		return nil
	}
	var d contract.ClaimVerifiedData
	if err := ev.Decode(&d); err != nil {
		return events.Permanent(err) // a malformed event cannot get better by retrying
	}
	at, err := time.Parse(clock.Layout, d.VerifiedAt)
	if err != nil {
		at = clock.Now()
	}
	return h.Objects.RecordClaim(ctx, ev.ObjectID, object.VerifiedClaim{
		ClaimID: d.ClaimID, Network: d.ProofType, Handle: socialHandle(d.ClaimedTarget), At: at,
	})
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
